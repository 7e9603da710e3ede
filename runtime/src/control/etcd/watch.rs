//! A watch on the record's key through the gateway's streaming
//! `POST /v3/watch`, run on a thread of its own, so that a node learns
//! that the record changed without reading it on every tick.
//!
//! The request is one `create_request` for the key (base64) from a start
//! revision; the answer is a stream of JSON objects, one a line: first
//! `created`, then one per batch of events (each carrying the key's new
//! mod revision), a progress notification now and then (no events: every
//! event up to its header's revision was sent), or a cancel (with
//! `compact_revision` when the start revision was compacted away). The
//! thread keeps, under a lock, the newest mod revision any event carried
//! (`WatchStatus::newest_revision`, which never goes back) and whether the
//! watch is up. The plane compares that with what it last returned
//! (`Watch::unchanged_since`).
//!
//! Every stream, the first and each one after a break, starts with a
//! range of the key (`keys_only`): its mod revision M and the store's
//! revision H. Nothing between the last revision covered and H is then
//! left to replay: if M is past it, the key changed unseen and M is taken
//! as the newest revision; either way the stream starts at H + 1. A watch
//! from an older revision would work too (etcd replays what it missed),
//! but etcd serves such a watcher from a loop that runs every 100 ms until
//! it has caught up, and holds back new events meanwhile: a node would
//! believe a changed record unchanged for up to that long after every
//! reconnection (seen in `tests/tcp.rs`, where the recovery finished
//! before a follower heard it had been opened). Starting past the store's
//! revision makes the new watcher current at once, and no compaction of
//! the revisions in between matters. Only a compaction landing between the
//! range and the watch's creation cancels it; then the watch starts again
//! at the compaction's revision and counts as covering from there
//! (`WatchStatus::from_revision`), so a plane that last read before it
//! reads again. While the watch is not up (connecting, broken, etcd down)
//! the plane reports nothing as known: its node reads on every tick, as it
//! would without a watch. A stream silent for `WATCH_IDLE_MS` is opened
//! again from where it was (the watch stays up meanwhile); that is also
//! when a thread whose plane was dropped notices and ends.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use std::io::{self, BufRead as _, BufReader, Read as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long the stream may stay silent before the thread opens it again
/// from where it was (a range and a watch: two requests); also the longest
/// a thread outlives its plane, and how long a connection that died
/// without a word can pass for a live one (the node's periodic re-read
/// bounds what that costs).
pub const WATCH_IDLE_MS: u64 = 5_000;
/// How long connecting to etcd for a stream, or the range before it, may
/// take.
pub const WATCH_CONNECT_MS: u64 = 1_000;
/// The pause after a failed stream, doubled after each failure in a row
/// up to `WATCH_BACKOFF_MS_MAX`.
pub const WATCH_BACKOFF_MS_MIN: u64 = 20;
/// The longest pause between two attempts to open the stream.
pub const WATCH_BACKOFF_MS_MAX: u64 = 1_000;
/// The longest line the stream may send: one batch of the key's events,
/// each carrying a whole record (etcd refuses requests over 1.5 MiB by
/// default, so a record is smaller than that).
pub const WATCH_LINE_BYTES_MAX: u64 = 64 << 20;
/// How often a pause looks whether the plane was dropped.
const STOP_POLL_MS: u64 = 20;

const _: () = assert!(WATCH_BACKOFF_MS_MIN <= WATCH_BACKOFF_MS_MAX);
// A stream opened again after a silence must not take longer than the
// silence itself: the thread would spend its time connecting.
const _: () = assert!(WATCH_CONNECT_MS <= WATCH_IDLE_MS);

/// Why a watch stream ended or could not start. The watch is down until a
/// stream is created again; meanwhile the plane reports no change as
/// known, and its node reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The thread that runs the watch could not be started.
    #[error("etcd at {endpoint}: watch on key {key}: cannot start its thread: {reason}")]
    Spawn {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// The operating system's error.
        reason: String,
    },
    /// Opening a stream failed: the range before it or `POST /v3/watch`,
    /// for want of a connection, an HTTP error status or an answer that is
    /// not a range's.
    #[error("etcd at {endpoint}: watch on key {key}: POST {path}: {reason}")]
    Connect {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// The request that failed: `/v3/kv/range` or `/v3/watch`.
        path: &'static str,
        /// What ureq or the parser reported.
        reason: String,
    },
    /// The stream broke or ended (etcd stopped, the connection reset).
    #[error("etcd at {endpoint}: watch on key {key}: stream broken: {reason}")]
    Stream {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// What reading it reported.
        reason: String,
    },
    /// The stream sent something that is not a watch response: bad JSON,
    /// a line over `WATCH_LINE_BYTES_MAX`, the gateway's error object.
    #[error("etcd at {endpoint}: watch on key {key}: unexpected answer: {reason}")]
    Answer {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// What is wrong, with the start of the line.
        reason: String,
    },
    /// etcd canceled the watch for a reason other than a compaction.
    #[error("etcd at {endpoint}: watch on key {key}: canceled by etcd: {reason}")]
    Canceled {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// etcd's `cancel_reason`, if it gave one.
        reason: String,
    },
    /// The start revision was compacted away: changes between it and the
    /// compaction cannot be replayed, so the watch starts again at the
    /// compaction and a plane that last read before it reads again.
    #[error("etcd at {endpoint}: watch on key {key}: revisions {start_revision}..{compact_revision} compacted; watching again from {compact_revision}")]
    Compacted {
        /// The etcd endpoint.
        endpoint: String,
        /// The key watched.
        key: String,
        /// Where the stream asked to start.
        start_revision: i64,
        /// The oldest revision etcd still has.
        compact_revision: i64,
    },
}

/// What a watch knows, for its plane and for diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchStatus {
    /// A stream is created and has not broken since: every change of the
    /// key from `from_revision` on reaches `newest_revision`, a
    /// notification's delay after it commits.
    pub up: bool,
    /// The first revision the watch covers without a gap: where it
    /// started, or a compaction's revision after one.
    pub from_revision: i64,
    /// The newest mod revision of the key an event carried (0 before the
    /// first). Never goes back.
    pub newest_revision: i64,
    /// Where the next stream starts: one past the newest event, progress
    /// notification or range seen.
    pub next_revision: i64,
    /// Streams created: the first, and one after each reconnection.
    pub streams: u64,
    /// Events of the key received.
    pub events: u64,
    /// Why the last stream ended, if one did other than by silence (kept
    /// once the watch is up again).
    pub last_error: Option<WatchError>,
}

impl WatchStatus {
    /// A watch from revision `from` on, not up yet: nothing seen.
    fn starting(from: i64) -> WatchStatus {
        WatchStatus {
            up: false,
            from_revision: from,
            newest_revision: 0,
            next_revision: from,
            streams: 0,
            events: 0,
            last_error: None,
        }
    }
}

/// A running watch on one key; its thread ends at the latest
/// `WATCH_IDLE_MS` after it is dropped.
#[derive(Debug)]
pub(super) struct Watch {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    status: Mutex<WatchStatus>,
    stop: AtomicBool,
}

impl Shared {
    fn status(&self) -> MutexGuard<'_, WatchStatus> {
        // The thread never panics while holding the lock; a poisoned one
        // still holds a consistent status (each update is one assignment
        // of plain fields).
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

/// Where a watch runs and what its errors name.
#[derive(Clone, Debug)]
struct Target {
    endpoint: String,
    key: String,
}

impl Watch {
    /// Watch `key` at `endpoint` from revision `from` on, on a new thread.
    /// A thread that cannot be started leaves the watch down for good,
    /// with `WatchError::Spawn`: the plane then reads as without one.
    pub(super) fn start(endpoint: &str, key: &str, from: i64) -> Watch {
        let shared = Arc::new(Shared {
            status: Mutex::new(WatchStatus::starting(from)),
            stop: AtomicBool::new(false),
        });
        let target = Target {
            endpoint: endpoint.to_string(),
            key: key.to_string(),
        };
        let thread_shared = Arc::clone(&shared);
        let thread_target = target.clone();
        let spawned = std::thread::Builder::new()
            .name("etcd-watch".into())
            .spawn(move || run(&thread_shared, &thread_target));
        if let Err(e) = spawned {
            let error = WatchError::Spawn {
                endpoint: target.endpoint,
                key: target.key,
                reason: e.to_string(),
            };
            tracing::warn!(%error, "reading the record on every tick instead");
            shared.status().last_error = Some(error);
        }
        Watch { shared }
    }

    /// What the watch knows now.
    pub(super) fn status(&self) -> WatchStatus {
        self.shared.status().clone()
    }

    /// Whether the key is known unchanged since a read at store revision
    /// `revision` found it at mod revision `mod_revision`: the watch is up,
    /// covers every revision after the read, and no event is newer than
    /// what the read found (an event at or below `revision` is at or below
    /// `mod_revision`, since the read saw no later change).
    pub(super) fn unchanged_since(&self, mod_revision: i64, revision: i64) -> bool {
        let s = self.shared.status();
        s.up && s.from_revision <= revision + 1 && s.newest_revision <= mod_revision
    }
}

/// How one stream ended.
#[derive(Debug)]
enum End {
    /// The plane was dropped.
    Stopped,
    /// Silent for `WATCH_IDLE_MS`: open it again at once, still up.
    Idle,
    /// Compacted: open it again at once from the compaction.
    Compacted(WatchError),
    /// Anything else: the watch is down; pause, then open it again.
    Failed(WatchError),
}

/// The thread: streams one after another until the plane is dropped.
fn run(shared: &Shared, target: &Target) {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_millis(WATCH_CONNECT_MS))
        .timeout_read(Duration::from_millis(WATCH_IDLE_MS))
        .timeout_write(Duration::from_millis(WATCH_IDLE_MS))
        .build();
    let mut backoff_ms = WATCH_BACKOFF_MS_MIN;
    // Bounded by the plane's life: each pass either ends the thread or
    // pauses (a silence or a backoff) before the next.
    while !shared.stopped() {
        let start = match catch_up(&agent, shared, target) {
            Ok(start) => start,
            Err(error) => {
                fail(shared, &error, backoff_ms);
                pause(shared, backoff_ms);
                backoff_ms = (backoff_ms * 2).min(WATCH_BACKOFF_MS_MAX);
                continue;
            }
        };
        match stream(&agent, shared, target, start) {
            End::Stopped => return,
            End::Idle => backoff_ms = WATCH_BACKOFF_MS_MIN,
            End::Compacted(error) => {
                tracing::warn!(%error, "the record will be read again");
                let mut s = shared.status();
                s.up = false;
                s.last_error = Some(error);
            }
            End::Failed(error) => {
                fail(shared, &error, backoff_ms);
                pause(shared, backoff_ms);
                backoff_ms = (backoff_ms * 2).min(WATCH_BACKOFF_MS_MAX);
            }
        }
    }
}

/// The watch is down for `error`; logged once as it goes down.
fn fail(shared: &Shared, error: &WatchError, retry_ms: u64) {
    let was_up = {
        let mut s = shared.status();
        let was_up = s.up;
        s.up = false;
        s.last_error = Some(error.clone());
        was_up
    };
    if was_up {
        tracing::warn!(%error, "watch down: reading the record on every tick until it is back");
    } else {
        tracing::debug!(%error, retry_ms, "watch still down");
    }
}

#[derive(Deserialize)]
struct RangeAnswer {
    header: Option<Header>,
    #[serde(default)]
    kvs: Vec<EventKv>,
}

/// Range the key before a stream: take a change since the last revision
/// covered as seen, and return where the stream starts (one past the
/// store's revision, so the new watcher is current at once).
fn catch_up(agent: &ureq::Agent, shared: &Shared, target: &Target) -> Result<i64, WatchError> {
    const PATH: &str = "/v3/kv/range";
    let failed = |reason: String| WatchError::Connect {
        endpoint: target.endpoint.clone(),
        key: target.key.clone(),
        path: PATH,
        reason,
    };
    let url = format!("{}{PATH}", target.endpoint.trim_end_matches('/'));
    let body = json!({ "key": B64.encode(target.key.as_bytes()), "keys_only": true });
    let text = agent
        .post(&url)
        .set("content-type", "application/json")
        .send_string(&body.to_string())
        .map_err(|e| failed(e.to_string()))?
        .into_string()
        .map_err(|e| failed(format!("reading the answer: {e}")))?;
    let answer: RangeAnswer = serde_json::from_str(&text)
        .map_err(|e| failed(format!("unexpected answer ({e}): {text}")))?;
    let number = |what: &str, v: Option<&str>| {
        v.and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| failed(format!("{what} {v:?} is not a number: {text}")))
    };
    let store = number(
        "header revision",
        answer.header.as_ref().and_then(|h| h.revision.as_deref()),
    )?;
    let key = match answer.kvs.first() {
        Some(kv) => Some(number("mod_revision", Some(&kv.mod_revision))?),
        None => None,
    };
    Ok(apply_range(&mut shared.status(), key, store))
}

/// A range found the key at mod revision `key` (`None`: absent) when the
/// store was at revision `store`: a change since the last revision covered
/// counts as seen (a key gone counts as changed at `store`, so the plane
/// reads and reports it), and nothing up to `store` is left to watch for.
/// Returns where the next stream starts.
fn apply_range(s: &mut WatchStatus, key: Option<i64>, store: i64) -> i64 {
    let changed = match key {
        Some(m) if m >= s.next_revision => Some(m),
        Some(_) => None,
        None => Some(store),
    };
    if let Some(m) = changed {
        s.newest_revision = s.newest_revision.max(m);
    }
    s.next_revision = s.next_revision.max(store + 1);
    s.next_revision
}

/// Sleep `ms`, waking early when the plane is dropped.
fn pause(shared: &Shared, ms: u64) {
    let mut left = ms;
    while left > 0 && !shared.stopped() {
        let step = left.min(STOP_POLL_MS);
        std::thread::sleep(Duration::from_millis(step));
        left -= step;
    }
}

#[derive(Deserialize)]
struct Line {
    result: Option<Response>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Response {
    header: Option<Header>,
    // The gateway leaves out fields at their default.
    #[serde(default)]
    created: bool,
    #[serde(default)]
    canceled: bool,
    compact_revision: Option<String>,
    #[serde(default)]
    cancel_reason: String,
    #[serde(default)]
    events: Vec<WatchEvent>,
}

#[derive(Deserialize)]
struct Header {
    revision: Option<String>,
}

#[derive(Deserialize)]
struct WatchEvent {
    kv: Option<EventKv>,
}

#[derive(Deserialize)]
struct EventKv {
    mod_revision: String,
}

/// One stream from `start`: open it, then apply each line to the status.
fn stream(agent: &ureq::Agent, shared: &Shared, target: &Target, start: i64) -> End {
    let url = format!("{}/v3/watch", target.endpoint.trim_end_matches('/'));
    let body = json!({ "create_request": {
        "key": B64.encode(target.key.as_bytes()),
        "start_revision": start.to_string(),
        "progress_notify": true,
    }});
    let response = match agent
        .post(&url)
        .set("content-type", "application/json")
        .send_string(&body.to_string())
    {
        Ok(r) => r,
        Err(e) => {
            return End::Failed(WatchError::Connect {
                endpoint: target.endpoint.clone(),
                key: target.key.clone(),
                path: "/v3/watch",
                reason: e.to_string(),
            })
        }
    };
    let mut reader = BufReader::new(response.into_reader());
    let mut line = Vec::new();
    // Bounded by the stream: it ends on silence, an error or a stop.
    loop {
        if shared.stopped() {
            return End::Stopped;
        }
        line.clear();
        let read = (&mut reader)
            .take(WATCH_LINE_BYTES_MAX + 1)
            .read_until(b'\n', &mut line);
        match read {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return End::Idle
            }
            Err(e) => return End::Failed(stream_error(target, e.to_string())),
            Ok(0) => return End::Failed(stream_error(target, "etcd ended the stream".into())),
            Ok(n) if n as u64 > WATCH_LINE_BYTES_MAX => {
                return End::Failed(answer_error(
                    target,
                    format!("a line over {WATCH_LINE_BYTES_MAX} bytes"),
                    &line,
                ))
            }
            Ok(_) => {}
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if let Err(end) = take_line(&mut shared.status(), target, start, text) {
            return end;
        }
    }
}

/// Apply one line of a stream that started at `start` to the status;
/// `Err` when it ends the stream.
fn take_line(s: &mut WatchStatus, target: &Target, start: i64, text: &[u8]) -> Result<(), End> {
    let parsed: Line = serde_json::from_slice(text)
        .map_err(|e| End::Failed(answer_error(target, e.to_string(), text)))?;
    if let Some(error) = parsed.error {
        return Err(End::Failed(answer_error(
            target,
            format!("error {error}"),
            text,
        )));
    }
    let Some(response) = parsed.result else {
        return Err(End::Failed(answer_error(target, "no result".into(), text)));
    };
    apply(s, target, start, response, text)
}

/// Apply one response to the status; `Err` when it ends the stream.
fn apply(
    s: &mut WatchStatus,
    target: &Target,
    start: i64,
    r: Response,
    text: &[u8],
) -> Result<(), End> {
    let number = |what: &str, v: &str| {
        v.parse::<i64>().map_err(|_| {
            End::Failed(answer_error(
                target,
                format!("{what} {v:?} is not a number"),
                text,
            ))
        })
    };
    let compact = match r.compact_revision.as_deref() {
        Some(c) => number("compact_revision", c)?,
        None => 0,
    };
    let mut revisions = Vec::with_capacity(r.events.len());
    for e in &r.events {
        if let Some(kv) = &e.kv {
            revisions.push(number("mod_revision", &kv.mod_revision)?);
        }
    }
    let header = match r.header.as_ref().and_then(|h| h.revision.as_deref()) {
        Some(h) => Some(number("header revision", h)?),
        None => None,
    };
    if compact > 0 {
        // Events from `start` to the compaction are gone: cover from the
        // compaction on, and replay from there.
        s.from_revision = s.from_revision.max(compact);
        s.next_revision = s.next_revision.max(compact);
        return Err(End::Compacted(WatchError::Compacted {
            endpoint: target.endpoint.clone(),
            key: target.key.clone(),
            start_revision: start,
            compact_revision: compact,
        }));
    }
    if r.canceled {
        return Err(End::Failed(WatchError::Canceled {
            endpoint: target.endpoint.clone(),
            key: target.key.clone(),
            reason: r.cancel_reason,
        }));
    }
    if r.created {
        s.up = true;
        s.streams += 1;
    }
    for &m in &revisions {
        s.newest_revision = s.newest_revision.max(m);
        s.next_revision = s.next_revision.max(m + 1);
        s.events += 1;
    }
    // A progress notification: every event up to its header's revision
    // was sent, so a stream opened again may start past it.
    if !r.created && r.events.is_empty() {
        if let Some(h) = header {
            s.next_revision = s.next_revision.max(h + 1);
        }
    }
    Ok(())
}

fn stream_error(target: &Target, reason: String) -> WatchError {
    WatchError::Stream {
        endpoint: target.endpoint.clone(),
        key: target.key.clone(),
        reason,
    }
}

/// The error for a bad line, quoting its start.
fn answer_error(target: &Target, what: String, line: &[u8]) -> WatchError {
    const QUOTE_BYTES_MAX: usize = 200;
    let quoted = String::from_utf8_lossy(&line[..line.len().min(QUOTE_BYTES_MAX)]);
    WatchError::Answer {
        endpoint: target.endpoint.clone(),
        key: target.key.clone(),
        reason: format!("{what}: {quoted}"),
    }
}

#[cfg(test)]
mod tests {
    //! The stream's lines as etcd 3.4's gateway sends them (captured from
    //! `POST /v3/watch`), applied to a status.
    use super::*;

    const HEADER: &str = r#""header":{"cluster_id":"7801232528081817440","member_id":"13458989633860879742","revision":"REV","raft_term":"2"}"#;

    fn line(rev: i64, rest: &str) -> Vec<u8> {
        let header = HEADER.replace("REV", &rev.to_string());
        format!(r#"{{"result":{{{header}{rest}}}}}"#).into_bytes()
    }

    fn event(m: i64) -> String {
        format!(
            r#"{{"kv":{{"key":"L2s=","create_revision":"2","mod_revision":"{m}","version":"3","value":"djE="}}}}"#
        )
    }

    fn target() -> Target {
        Target {
            endpoint: "http://127.0.0.1:2379".into(),
            key: "/k".into(),
        }
    }

    fn status(from: i64) -> WatchStatus {
        WatchStatus::starting(from)
    }

    #[test]
    fn created_then_events_raise_the_newest_revision_and_the_next_start() {
        let mut s = status(3);
        assert!(take_line(&mut s, &target(), 3, &line(4, r#","created":true"#)).is_ok());
        assert!(s.up && s.streams == 1, "{s:?}");
        let batch = format!(r#","events":[{},{}]"#, event(3), event(4));
        assert!(take_line(&mut s, &target(), 3, &line(4, &batch)).is_ok());
        assert_eq!((s.newest_revision, s.next_revision, s.events), (4, 5, 2));
        assert_eq!(s.from_revision, 3, "no gap");
    }

    #[test]
    fn a_progress_notification_moves_the_next_start_and_nothing_else() {
        let mut s = status(3);
        s.newest_revision = 4;
        s.next_revision = 5;
        assert!(take_line(&mut s, &target(), 5, &line(9, "")).is_ok());
        assert_eq!((s.newest_revision, s.next_revision), (4, 10));
    }

    #[test]
    fn a_compaction_starts_the_watch_again_at_its_revision_and_covers_from_there() {
        let mut s = status(3);
        take_line(&mut s, &target(), 3, &line(5, r#","created":true"#)).unwrap();
        let cancel = r#","canceled":true,"compact_revision":"5""#;
        match take_line(&mut s, &target(), 3, &line(5, cancel)) {
            Err(End::Compacted(e)) => assert_eq!(
                e,
                WatchError::Compacted {
                    endpoint: "http://127.0.0.1:2379".into(),
                    key: "/k".into(),
                    start_revision: 3,
                    compact_revision: 5,
                }
            ),
            other => panic!("a compaction ends the stream as one, not {other:?}"),
        }
        assert_eq!((s.from_revision, s.next_revision), (5, 5), "{s:?}");
    }

    #[test]
    fn a_cancel_an_error_or_a_bad_line_ends_the_stream_as_a_failure_naming_the_key() {
        let bad: [Vec<u8>; 4] = [
            line(5, r#","canceled":true,"cancel_reason":"no reason""#),
            br#"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: stopping"}}"#
                .to_vec(),
            b"{oops".to_vec(),
            line(5, r#","events":[{"kv":{"mod_revision":"x"}}]"#),
        ];
        for text in bad {
            let mut s = status(3);
            match take_line(&mut s, &target(), 3, &text) {
                Err(End::Failed(e)) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("http://127.0.0.1:2379") && msg.contains("/k"),
                        "{msg}"
                    );
                }
                other => panic!(
                    "{}: not a failure: {other:?}",
                    String::from_utf8_lossy(&text)
                ),
            }
            assert_eq!(s.newest_revision, 0);
        }
    }

    #[test]
    fn a_range_before_a_stream_takes_an_unseen_change_and_starts_past_the_store() {
        let mut s = status(3);
        // The key last changed before the revisions covered: nothing seen.
        assert_eq!(apply_range(&mut s, Some(2), 9), 10);
        assert_eq!((s.newest_revision, s.next_revision), (0, 10));
        // It changed at 12, unseen: taken as the newest.
        assert_eq!(apply_range(&mut s, Some(12), 14), 15);
        assert_eq!(s.newest_revision, 12);
        // A later range never takes either back.
        assert_eq!(apply_range(&mut s, Some(12), 13), 15);
        assert_eq!((s.newest_revision, s.next_revision), (12, 15));
        // Gone: changed as of the range, so the plane reads and says so.
        apply_range(&mut s, None, 20);
        assert_eq!(s.newest_revision, 20);
    }
}
