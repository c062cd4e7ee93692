//! Lock-step rounds over a batch API (`--batch`): every model call the runner's
//! episodes make is parked, and when every live episode is waiting on one (or the
//! queue has settled), the queue goes to the provider as one round of batches; each
//! result is handed back to the call that waits for it, and the episodes run on to
//! their next call. Episodes finish at different rounds; nothing in the agent loop
//! knows it is batched.
//!
//! [`BatchingModel`] is the provider layer of a batched stack (below the response
//! cache, the budget and the retry layer, so cached calls never enter a batch and a
//! failed or expired request is retried like any failed call, in a later round).
//! [`BatchRounds`] is the queue and its round driver ([`BatchRounds::drive`]), which
//! the runner polls beside its episodes. The batches a round submitted are appended to
//! the run directory's journal (`batches.jsonl`, [`JOURNAL`]) with the request each
//! `custom_id` stands for; a resumed run polls those batches and answers the same
//! requests from their results instead of paying for them again. When the stack has a
//! response cache, a round is marked delivered in the journal once the next round is
//! due (every answer it gave has been stored in the cache by then) and a resumed run
//! reads back only the undelivered batches; without a cache every journaled batch is
//! read back, and its answers held, for as long as the resumed run lasts.

use super::{BatchApi, BatchCounts, BatchHandle, BatchItem, BatchProgress, ItemOutcome};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};

/// Failed downloads of an ended batch's results tried again before the error stands
/// (as many as failed status polls are: [`BatchRounds::settle_batch`]).
const FAILED_DOWNLOADS_TRIED: u32 = 20;

/// The run directory's journal of submitted batches.
pub const JOURNAL: &str = "batches.jsonl";

/// What one batch may hold: the providers' published limits (OpenAI: 50,000 requests
/// and a 200 MB input file; Anthropic: 100,000 requests and 256 MB), with room left
/// for the envelope around each body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    pub requests: usize,
    pub bytes: usize,
}

impl BatchLimits {
    pub fn of(provider: super::BatchProvider) -> BatchLimits {
        match provider {
            super::BatchProvider::OpenAi => BatchLimits {
                requests: 50_000,
                bytes: 190_000_000,
            },
            super::BatchProvider::Anthropic => BatchLimits {
                requests: 100_000,
                bytes: 240_000_000,
            },
        }
    }
}

/// How a round is told about: one line per change of a batch's status or counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundReport {
    /// 1-based; resumed batches report as round 0.
    pub round: u32,
    pub batch_id: String,
    pub requests: usize,
    /// The provider's word for where the batch stands (`ended` once it has).
    pub status: String,
    pub counts: BatchCounts,
    /// Since the batch was submitted (or, resumed, since polling began).
    pub elapsed: Duration,
}

/// One journal line: a submitted batch and the request key of each `custom_id`, or
/// the batches whose every answer has been handed back (and cached, if the stack has a
/// cache).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum JournalLine {
    Submitted {
        round: u32,
        batch: BatchHandle,
        /// `custom_id` -> request key.
        keys: Vec<(String, String)>,
    },
    Delivered {
        delivered: Vec<String>,
    },
}

enum Due {
    Now(Vec<Parked>),
    Wait(Duration),
    Over,
}

type Reply = oneshot::Sender<Result<ChatResponse, LlmError>>;

/// A call waiting for its round.
struct Parked {
    key: String,
    /// The request's serialized size, for the provider's byte limit.
    size: usize,
    request: ChatRequest,
    reply: Reply,
}

#[derive(Default)]
struct Queue {
    parked: Vec<Parked>,
    /// Episodes of the run not yet finished, and how many of them may be in flight.
    remaining: usize,
    slots: usize,
    last_parked: Option<Instant>,
    /// Answers recovered from a resumed run's batches, by request key.
    recovered: HashMap<String, ChatResponse>,
    round: u32,
}

/// The queue of parked calls and the round driver of one run.
pub struct BatchRounds {
    api: Arc<dyn BatchApi>,
    identity: String,
    limits: BatchLimits,
    /// How often a running batch is polled.
    pub backoff: super::Backoff,
    /// How long a non-empty queue may sit unchanged before it is submitted although
    /// some live episode has not parked a call (one that waits on another's call, as
    /// the response cache's coalescing does, or sleeps in the retry layer's backoff).
    pub settle: Duration,
    queue: Mutex<Queue>,
    wake: Notify,
    journal: Mutex<Option<PathBuf>>,
    /// The batches of the last round, not yet marked delivered.
    undelivered: Mutex<Vec<String>>,
}

impl BatchRounds {
    /// Rounds over `api`; `identity` is the provider's cache identity (what besides
    /// the request changes a reply), which the journal's request keys hash.
    pub fn new(api: Arc<dyn BatchApi>, identity: impl Into<String>) -> Arc<BatchRounds> {
        let limits = BatchLimits::of(api.provider());
        Arc::new(BatchRounds {
            api,
            identity: identity.into(),
            limits,
            backoff: super::Backoff::default(),
            settle: Duration::from_secs(2),
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            journal: Mutex::new(None),
            undelivered: Mutex::new(Vec::new()),
        })
    }

    /// With other poll timings (tests, benchmarks).
    pub fn with_timing(
        api: Arc<dyn BatchApi>,
        identity: impl Into<String>,
        backoff: super::Backoff,
        settle: Duration,
    ) -> Arc<BatchRounds> {
        let mut rounds = BatchRounds::new(api, identity);
        let r = Arc::get_mut(&mut rounds).expect("just made");
        r.backoff = backoff;
        r.settle = settle;
        rounds
    }

    /// The most requests one batch may hold: how many episodes a batched run keeps in
    /// flight by default.
    pub fn max_requests(&self) -> usize {
        self.limits.requests
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a run of `episodes` episodes, at most `slots` of them in flight at once,
    /// journaling into `dir`: the batches an earlier run of `dir` submitted are polled
    /// to their end and their answers kept for the requests they answer (`seen` is told
    /// about them as round 0); with `cached` (the stack has a response cache, which
    /// holds every answer handed back) only the batches not marked delivered.
    pub async fn start(
        &self,
        dir: &Path,
        episodes: usize,
        slots: usize,
        cached: bool,
        seen: &(dyn Fn(&RoundReport) + Sync),
    ) -> Result<usize, LlmError> {
        let path = dir.join(JOURNAL);
        let recovered = self.recover(&path, cached, seen).await?;
        *self.journal.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
        let mut q = self.queue();
        q.remaining = episodes;
        q.slots = slots.max(1);
        let n = recovered.len();
        q.recovered = recovered;
        Ok(n)
    }

    /// One episode of the run has ended (whatever became of it).
    pub fn finished(&self) {
        let mut q = self.queue();
        q.remaining = q.remaining.saturating_sub(1);
        drop(q);
        self.wake.notify_one();
    }

    /// Parks `request` for the next round; an answer recovered from an earlier run's
    /// batch comes back at once.
    async fn call(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let (key, size) = request_key(&self.identity, request);
        let rx = {
            let mut q = self.queue();
            if let Some(r) = q.recovered.get(&key) {
                return Ok(r.clone());
            }
            let (reply, rx) = oneshot::channel();
            q.parked.push(Parked {
                key,
                size,
                request: request.clone(),
                reply,
            });
            q.last_parked = Some(Instant::now());
            rx
        };
        self.wake.notify_one();
        rx.await.unwrap_or_else(|_| {
            Err(LlmError::Refused(
                "the batch round driver stopped before this call's round".into(),
            ))
        })
    }

    /// The calls of the next round, once it is due: every live episode has parked
    /// one (up to the episodes that may be in flight), or the queue has settled.
    fn due(&self) -> Due {
        let mut q = self.queue();
        // A call whose episode was dropped (a run stopping) is not sent.
        q.parked.retain(|p| !p.reply.is_closed());
        if q.parked.is_empty() {
            return match q.remaining {
                0 => Due::Over,
                _ => Due::Wait(self.settle),
            };
        }
        let live = q.remaining.min(q.slots).max(1);
        let quiet = q.last_parked.map_or(Duration::ZERO, |t| t.elapsed());
        if q.parked.len() >= live || quiet >= self.settle {
            return Due::Now(std::mem::take(&mut q.parked));
        }
        Due::Wait(self.settle - quiet)
    }

    /// Runs rounds until every episode has finished; each change of a batch is told to
    /// `seen`. An error here is the journal's (a run that cannot record what it paid
    /// for stops); a batch's own failures go back to the calls in it.
    pub async fn drive(&self, seen: &(dyn Fn(&RoundReport) + Sync)) -> Result<(), LlmError> {
        loop {
            let parked = match self.due() {
                Due::Now(parked) => parked,
                Due::Over => return self.delivered(),
                Due::Wait(wait) => {
                    let _ = tokio::time::timeout(wait, self.wake.notified()).await;
                    continue;
                }
            };
            let round = {
                let mut q = self.queue();
                q.round += 1;
                q.round
            };
            // Every episode has taken its last round's answer (it waits on its next
            // call, or has ended): that round is delivered.
            self.delivered()?;
            self.round(round, parked, seen).await?;
        }
    }

    /// Submits `parked` as one round (as many batches as the limits need), waits for
    /// them together, and answers every call.
    async fn round(
        &self,
        round: u32,
        parked: Vec<Parked>,
        seen: &(dyn Fn(&RoundReport) + Sync),
    ) -> Result<(), LlmError> {
        let chunks = self.split(parked);
        let batches = chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| self.one_batch(round, i, chunk, seen));
        for outcome in futures::future::join_all(batches).await {
            outcome?;
        }
        Ok(())
    }

    /// Splits a round by the provider's limits on requests and bytes per batch.
    fn split(&self, parked: Vec<Parked>) -> Vec<Vec<Parked>> {
        let mut chunks: Vec<Vec<Parked>> = vec![Vec::new()];
        let mut bytes = 0;
        for p in parked {
            let size = p.size;
            let last = chunks.last().expect("never empty");
            if !last.is_empty()
                && (last.len() >= self.limits.requests || bytes + size > self.limits.bytes)
            {
                chunks.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            chunks.last_mut().expect("never empty").push(p);
        }
        chunks
    }

    async fn one_batch(
        &self,
        round: u32,
        index: usize,
        parked: Vec<Parked>,
        seen: &(dyn Fn(&RoundReport) + Sync),
    ) -> Result<(), LlmError> {
        let ids: Vec<String> = (0..parked.len())
            .map(|i| format!("r{round}-b{index}-{i}"))
            .collect();
        // The requests move into the batch; each call keeps its key and reply channel.
        let (items, waiting): (Vec<BatchItem>, Vec<(String, Reply)>) = parked
            .into_iter()
            .zip(&ids)
            .map(|(p, id)| {
                let item = BatchItem {
                    custom_id: id.clone(),
                    request: p.request,
                };
                (item, (p.key, p.reply))
            })
            .unzip();
        let submitted = self.api.submit(&items).await;
        drop(items);
        let handle = match submitted {
            Ok(h) => h,
            Err(e) => {
                // Nothing was submitted: each call fails as its own request would
                // have, and the retry layer decides whether it goes in a later round.
                for (_, reply) in waiting {
                    let _ = reply.send(Err(e.clone()));
                }
                return Ok(());
            }
        };
        self.journal(&JournalLine::Submitted {
            round,
            batch: handle.clone(),
            keys: ids
                .iter()
                .cloned()
                .zip(waiting.iter().map(|(key, _)| key.clone()))
                .collect(),
        })?;
        self.undelivered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(handle.id.clone());
        let mut outcomes = self.settle_batch(round, &handle, &ids, seen).await;
        for ((_, reply), id) in waiting.into_iter().zip(&ids) {
            let answer = match &mut outcomes {
                Ok(by_id) => answer(by_id.remove(id), &handle),
                Err(e) => Err(e.clone()),
            };
            let _ = reply.send(answer);
        }
        Ok(())
    }

    /// Polls `handle` until it ends, then fetches its outcomes by `custom_id`.
    async fn settle_batch(
        &self,
        round: u32,
        handle: &BatchHandle,
        ids: &[String],
        seen: &(dyn Fn(&RoundReport) + Sync),
    ) -> Result<HashMap<String, ItemOutcome>, LlmError> {
        let started = Instant::now();
        let mut last: Option<(String, BatchCounts)> = None;
        let mut pause = self.backoff.first;
        let mut failed_polls = 0;
        loop {
            let (status, counts, ended) = match self.api.progress(handle).await {
                Ok(BatchProgress::Running { status, counts }) => (status, counts, false),
                Ok(BatchProgress::Ended { counts }) => ("ended".to_string(), counts, true),
                Ok(BatchProgress::Refused { reason }) => {
                    return Err(LlmError::Config(format!(
                        "batch {} was refused by the provider: {reason}",
                        handle.id
                    )))
                }
                // A poll that fails is not the batch failing: it is paid for, so keep
                // asking (a while) rather than submit it again.
                Err(e) if e.is_retryable() && failed_polls < 20 => {
                    failed_polls += 1;
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(self.backoff.longest);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if last.as_ref() != Some(&(status.clone(), counts)) {
                seen(&RoundReport {
                    round,
                    batch_id: handle.id.clone(),
                    requests: handle.requests,
                    status: status.clone(),
                    counts,
                    elapsed: started.elapsed(),
                });
                last = Some((status, counts));
            }
            if ended {
                return self.download(handle, ids).await;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(self.backoff.longest);
        }
    }

    /// The outcomes of the ended batch `handle`. A download that fails is not the batch
    /// failing: the batch is paid for, so the download is tried again in place, with
    /// the polls' backoff, rather than handed to the retry layer, which would submit
    /// every call of the batch again and pay twice. After that the error stands (the
    /// journal still names the batch, so a resume reads it back).
    async fn download(
        &self,
        handle: &BatchHandle,
        ids: &[String],
    ) -> Result<HashMap<String, ItemOutcome>, LlmError> {
        let mut pause = self.backoff.first;
        let mut failures = 0;
        loop {
            match self.api.results(handle, ids).await {
                Err(e) if e.is_retryable() && failures < FAILED_DOWNLOADS_TRIED => {
                    failures += 1;
                    tracing::warn!(batch = %handle.id, error = %e, "batch results download failed; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(self.backoff.longest);
                }
                outcome => return outcome,
            }
        }
    }

    /// Marks the last round's batches delivered.
    fn delivered(&self) -> Result<(), LlmError> {
        let ids = std::mem::take(&mut *self.undelivered.lock().unwrap_or_else(|e| e.into_inner()));
        if ids.is_empty() {
            return Ok(());
        }
        self.journal(&JournalLine::Delivered { delivered: ids })
    }

    fn journal(&self, line: &JournalLine) -> Result<(), LlmError> {
        let path = self
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(path) = path else {
            return Ok(());
        };
        let text = serde_json::to_string(line).expect("a journal line serializes") + "\n";
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            f.write_all(text.as_bytes())?;
            f.sync_data()
        };
        write().map_err(|e| {
            LlmError::Config(format!(
                "{}: cannot record a submitted batch ({e}); stopping so it is not paid for twice",
                path.display()
            ))
        })
    }

    /// The answers of the batches an earlier run journaled, by request key (with
    /// `cached`, of the undelivered ones only); a line that cannot be read (a cut last
    /// line) or belongs to another provider is skipped.
    async fn recover(
        &self,
        path: &Path,
        cached: bool,
        seen: &(dyn Fn(&RoundReport) + Sync),
    ) -> Result<HashMap<String, ChatResponse>, LlmError> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(HashMap::new());
        };
        let lines: Vec<JournalLine> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let delivered: std::collections::HashSet<&String> = lines
            .iter()
            .filter_map(|l| match l {
                JournalLine::Delivered { delivered } if cached => Some(delivered),
                _ => None,
            })
            .flatten()
            .collect();
        let submitted = lines.iter().filter_map(|l| match l {
            JournalLine::Submitted { batch, keys, .. }
                if batch.provider == self.api.provider() && !delivered.contains(&batch.id) =>
            {
                Some((batch, keys))
            }
            _ => None,
        });
        let settled = submitted.map(|(batch, keys)| async move {
            let ids: Vec<String> = keys.iter().map(|(id, _)| id.clone()).collect();
            (batch, keys, self.settle_batch(0, batch, &ids, seen).await)
        });
        let mut recovered = HashMap::new();
        for (batch, keys, outcomes) in futures::future::join_all(settled).await {
            let Ok(mut outcomes) = outcomes else {
                // A batch that can no longer be read (deleted, refused): its requests
                // are simply sent again.
                tracing::warn!(batch = %batch.id, "an earlier batch could not be read back; its requests are sent again");
                continue;
            };
            for (id, key) in keys {
                if let Some(ItemOutcome::Done(mut r)) = outcomes.remove(id) {
                    r.batched = true;
                    recovered.insert(key.clone(), r);
                }
            }
        }
        Ok(recovered)
    }
}

/// A result as its call's answer: a request the batch never ran is a retryable
/// error (the retry layer sends it again in a later round).
fn answer(outcome: Option<ItemOutcome>, handle: &BatchHandle) -> Result<ChatResponse, LlmError> {
    match outcome {
        Some(ItemOutcome::Done(mut r)) => {
            r.batched = true;
            Ok(r)
        }
        Some(ItemOutcome::Failed(e)) => Err(e),
        Some(ItemOutcome::Expired) | None => Err(LlmError::Http {
            provider: format!("batch {}", handle.id),
            status: 503,
            message: "the batch ended before this request ran (expired)".into(),
            retry_after: None,
        }),
    }
}

/// What identifies a request across runs (the provider's identity and the request,
/// hashed), and the request's serialized size.
fn request_key(identity: &str, request: &ChatRequest) -> (String, usize) {
    let body = serde_json::to_vec(request).expect("a ChatRequest always serializes");
    let mut h = Sha256::new();
    h.update(identity.as_bytes());
    h.update([0]);
    h.update(&body);
    let key = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    (key, body.len())
}

/// The provider layer of a batched stack: each call waits for its round, so its calls
/// are answered only while [`BatchRounds::drive`] runs (the runner drives it).
pub struct BatchingModel {
    rounds: Arc<BatchRounds>,
    provider: Arc<dyn ChatModel>,
}

impl BatchingModel {
    /// `provider` names the model (records, prices, cache identity); its calls go to
    /// `rounds` instead.
    pub fn new(rounds: Arc<BatchRounds>, provider: Arc<dyn ChatModel>) -> BatchingModel {
        BatchingModel { rounds, provider }
    }
}

#[async_trait]
impl ChatModel for BatchingModel {
    fn name(&self) -> &str {
        self.provider.name()
    }
    fn cache_identity(&self) -> Option<String> {
        self.provider.cache_identity()
    }
    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.rounds.call(request).await
    }
}
