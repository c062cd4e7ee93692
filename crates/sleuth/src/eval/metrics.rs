//! Official answer and support metrics (HotpotQA, MuSiQue, 2Wiki evaluation scripts).
