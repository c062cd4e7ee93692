//! Tables, figures and trace viewers, computed from run records alone.
