//! The etcd control plane: the record as one etcd key, written through
//! etcd's v3 JSON gateway (`/v3/kv/range`, `/v3/kv/txn`).
//!
//! A guarded write reads the key (record and mod revision), checks the
//! record's version and the write's preconditions, and commits with one
//! transaction: compare the key's mod revision with the one read, put the
//! next record on success, range the key on failure. A failed compare means
//! another writer committed in between; it is reported as
//! `StoreError::StaleVersion` naming the version that writer committed,
//! and never retried here.
//!
//! A node's registration (`ControlPlane::register`) is the key
//! `<record key>/nodes/<node>`, written by one transaction that compares
//! its mod revision (or its absence) with the one read.
//!
//! Keys and values travel base64-encoded, and 64-bit integers as decimal
//! strings, as the gateway's protobuf-to-JSON mapping requires.
//!
//! `known_unchanged`: the plane remembers, of the record it last returned,
//! the key's mod revision and the store revision it was read at (the
//! answer's header). The first call starts a watch on the key from the
//! revision after that (`watch`); from then on the record is known
//! unchanged while the watch is up, covers every revision since the read,
//! and has seen no event of the key newer than the mod revision read.

mod watch;

pub use watch::{WatchError, WatchStatus, WATCH_BACKOFF_MS_MAX, WATCH_IDLE_MS};

use super::{ControlError, ControlPlane, Registration};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use livemove_impl::store::{self, Record, StoreError, Write};
use livemove_impl::{Mutants, NodeId, Version};
use serde::Deserialize;
use serde_json::json;
use std::time::Duration;

/// How long one HTTP request to etcd may take before the call fails.
pub const REQUEST_TIMEOUT_MS_MAX: u64 = 5_000;

/// Where the record lives in etcd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdConfig {
    /// The client URL, such as `http://127.0.0.1:2379`.
    pub endpoint: String,
    /// The key holding the record.
    pub key: String,
}

/// The coordination record in one etcd key.
#[derive(Debug)]
pub struct EtcdControlPlane {
    config: EtcdConfig,
    agent: ureq::Agent,
    mutants: Mutants,
    /// Of the record this plane last returned: where it was read.
    held: Option<Held>,
    /// The watch on the key, from the first `known_unchanged` on.
    watch: Option<watch::Watch>,
}

/// Where a record the plane returned was read: the key's mod revision,
/// and the store revision of the answer (no change of the key between).
#[derive(Clone, Copy, Debug)]
struct Held {
    mod_revision: i64,
    revision: i64,
}

/// A stored value and the revision of the write that stored it.
struct Stored {
    record: Record,
    mod_revision: i64,
}

#[derive(Deserialize)]
struct RangeResponse {
    header: Option<ResponseHeader>,
    #[serde(default)]
    kvs: Vec<KeyValue>,
}

#[derive(Deserialize)]
struct ResponseHeader {
    revision: Option<String>,
}

#[derive(Deserialize)]
struct KeyValue {
    #[serde(default)]
    value: String,
    mod_revision: String,
}

#[derive(Deserialize)]
struct TxnResponse {
    header: Option<ResponseHeader>,
    // The gateway leaves out fields at their default, so `false` is absent.
    #[serde(default)]
    succeeded: bool,
    #[serde(default)]
    responses: Vec<ResponseOp>,
}

#[derive(Deserialize)]
struct ResponseOp {
    response_range: Option<RangeResponse>,
}

impl EtcdControlPlane {
    /// A control plane on `config`'s key; nothing is contacted until the
    /// first call.
    pub fn new(config: EtcdConfig) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_millis(REQUEST_TIMEOUT_MS_MAX))
            .build();
        EtcdControlPlane {
            config,
            agent,
            mutants: Mutants::default(),
            held: None,
            watch: None,
        }
    }

    /// What the watch on the key knows, once `known_unchanged` started it.
    pub fn watch_status(&self) -> Option<WatchStatus> {
        self.watch.as_ref().map(|w| w.status())
    }

    /// The store revision an answer was given at.
    fn header_revision(&self, header: Option<&ResponseHeader>) -> Result<i64, ControlError> {
        let text = header
            .and_then(|h| h.revision.as_deref())
            .ok_or_else(|| self.etcd_error("an answer without its header's revision".into()))?;
        text.parse()
            .map_err(|_| self.etcd_error(format!("header revision {text:?} is not a number")))
    }

    /// Switch mutants on (they relax the store's guards, for the bug zoo).
    pub fn set_mutants(&mut self, mutants: Mutants) {
        self.mutants = mutants;
    }

    fn key_b64(&self) -> String {
        B64.encode(self.config.key.as_bytes())
    }

    fn post<R: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> Result<R, ControlError> {
        let url = format!("{}{}", self.config.endpoint.trim_end_matches('/'), path);
        let response = self
            .agent
            .post(&url)
            .set("content-type", "application/json")
            .send_string(&body.to_string())
            .map_err(|e| self.etcd_error(format!("POST {path}: {e}")))?;
        let text = response
            .into_string()
            .map_err(|e| self.etcd_error(format!("POST {path}: reading the answer: {e}")))?;
        serde_json::from_str(&text)
            .map_err(|e| self.etcd_error(format!("POST {path}: unexpected answer ({e}): {text}")))
    }

    fn etcd_error(&self, reason: String) -> ControlError {
        ControlError::Etcd {
            endpoint: self.config.endpoint.clone(),
            reason,
        }
    }

    /// The stored record, and the store revision it was read at.
    fn range(&self) -> Result<(Option<Stored>, i64), ControlError> {
        let r: RangeResponse = self.post("/v3/kv/range", json!({ "key": self.key_b64() }))?;
        let revision = self.header_revision(r.header.as_ref())?;
        Ok((self.decode(r)?, revision))
    }

    /// The value of `key` and the revision that wrote it, if it exists.
    fn range_raw(&self, key: &str) -> Result<Option<(Vec<u8>, i64)>, ControlError> {
        let r: RangeResponse =
            self.post("/v3/kv/range", json!({ "key": B64.encode(key.as_bytes()) }))?;
        self.decode_raw(r, key)
    }

    fn decode_raw(
        &self,
        r: RangeResponse,
        key: &str,
    ) -> Result<Option<(Vec<u8>, i64)>, ControlError> {
        let Some(kv) = r.kvs.into_iter().next() else {
            return Ok(None);
        };
        let mod_revision: i64 = kv.mod_revision.parse().map_err(|_| {
            self.etcd_error(format!(
                "mod_revision {:?} is not a number",
                kv.mod_revision
            ))
        })?;
        let bytes = B64.decode(&kv.value).map_err(|e| ControlError::Corrupt {
            location: format!(
                "etcd {} key {key} at mod revision {mod_revision}",
                self.config.endpoint
            ),
            reason: format!("value is not base64: {e}"),
        })?;
        Ok(Some((bytes, mod_revision)))
    }

    fn decode(&self, r: RangeResponse) -> Result<Option<Stored>, ControlError> {
        let Some((bytes, mod_revision)) = self.decode_raw(r, &self.config.key)? else {
            return Ok(None);
        };
        let location = format!("{} at mod revision {mod_revision}", self.location());
        let record = serde_json::from_slice(&bytes).map_err(|e| ControlError::Corrupt {
            location,
            reason: e.to_string(),
        })?;
        Ok(Some(Stored {
            record,
            mod_revision,
        }))
    }

    /// One transaction on `key`: if its mod revision is `mod_revision`
    /// (`None`: the key does not exist) put `value`. Whether it committed.
    fn txn_raw(
        &self,
        key: &str,
        mod_revision: Option<i64>,
        value: &[u8],
    ) -> Result<bool, ControlError> {
        let key = B64.encode(key.as_bytes());
        let compare = match mod_revision {
            None => json!({
                "key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"
            }),
            Some(m) => json!({
                "key": key, "target": "MOD", "result": "EQUAL", "mod_revision": m.to_string()
            }),
        };
        let body = json!({
            "compare": [compare],
            "success": [{ "request_put": { "key": key, "value": B64.encode(value) } }],
        });
        let t: TxnResponse = self.post("/v3/kv/txn", body)?;
        Ok(t.succeeded)
    }

    /// One transaction: if `compare` holds put `record`, else range the key.
    /// Returns whether it committed and, if not, what is stored; and the
    /// store revision of the answer (the put's, when it committed).
    fn txn(
        &self,
        compare: serde_json::Value,
        record: &Record,
    ) -> Result<(bool, Option<Stored>, i64), ControlError> {
        let value = serde_json::to_vec(record)
            .expect("invariant broken: a record always serializes to JSON");
        let body = json!({
            "compare": [compare],
            "success": [{ "request_put": { "key": self.key_b64(), "value": B64.encode(value) } }],
            "failure": [{ "request_range": { "key": self.key_b64() } }],
        });
        let t: TxnResponse = self.post("/v3/kv/txn", body)?;
        let revision = self.header_revision(t.header.as_ref())?;
        if t.succeeded {
            return Ok((true, None, revision));
        }
        let range = t
            .responses
            .into_iter()
            .find_map(|op| op.response_range)
            .ok_or_else(|| self.etcd_error("failed transaction without its range".into()))?;
        Ok((false, self.decode(range)?, revision))
    }
}

impl ControlPlane for EtcdControlPlane {
    fn location(&self) -> String {
        format!("etcd {} key {}", self.config.endpoint, self.config.key)
    }

    fn create(&mut self, initial: &Record) -> Result<Record, ControlError> {
        // Create revision 0 means the key does not exist.
        let absent = json!({
            "key": self.key_b64(), "target": "CREATE", "result": "EQUAL", "create_revision": "0"
        });
        self.held = None;
        match self.txn(absent, initial)? {
            (true, _, revision) => {
                self.held = Some(Held {
                    mod_revision: revision,
                    revision,
                });
                tracing::info!(key = %self.config.key, version = %initial.version, "record created");
                Ok(initial.clone())
            }
            (false, Some(existing), revision) => {
                self.held = Some(Held {
                    mod_revision: existing.mod_revision,
                    revision,
                });
                Ok(existing.record)
            }
            (false, None, _) => {
                Err(self
                    .etcd_error("create failed because the key exists, yet it is absent".into()))
            }
        }
    }

    fn read(&mut self) -> Result<Record, ControlError> {
        match self.range()? {
            (Some(s), revision) => {
                self.held = Some(Held {
                    mod_revision: s.mod_revision,
                    revision,
                });
                Ok(s.record)
            }
            (None, _) => Err(ControlError::NotCreated {
                location: self.location(),
            }),
        }
    }

    fn write(&mut self, expected: Version, write: &Write) -> Result<Record, ControlError> {
        let location = self.location();
        // Read for the check, not returned: `held` stays the record the
        // caller holds.
        let current = self.range()?.0.ok_or_else(|| ControlError::NotCreated {
            location: location.clone(),
        })?;
        if current.record.version != expected {
            return Err(ControlError::Refused {
                location,
                source: StoreError::StaleVersion {
                    expected,
                    found: current.record.version,
                },
            });
        }
        let next = store::write::apply(&current.record, write, self.mutants).map_err(|source| {
            ControlError::Refused {
                location: location.clone(),
                source,
            }
        })?;
        let unchanged = json!({
            "key": self.key_b64(), "target": "MOD", "result": "EQUAL",
            "mod_revision": current.mod_revision.to_string()
        });
        match self.txn(unchanged, &next)? {
            (true, _, revision) => {
                // The put is the transaction: the key's new mod revision
                // is the answer's revision.
                self.held = Some(Held {
                    mod_revision: revision,
                    revision,
                });
                tracing::debug!(action = write.action(), version = %next.version, "committed");
                Ok(next)
            }
            // Another writer committed between our range and our
            // transaction: the version we read is stale.
            (false, Some(now), _) => Err(ControlError::Refused {
                location,
                source: StoreError::StaleVersion {
                    expected,
                    found: now.record.version,
                },
            }),
            (false, None, _) => Err(ControlError::NotCreated { location }),
        }
    }

    fn known_unchanged(&mut self) -> bool {
        let Some(held) = self.held else {
            return false;
        };
        match &self.watch {
            Some(w) => w.unchanged_since(held.mod_revision, held.revision),
            None => {
                // Started from the revision after the read: nothing the
                // read did not see can slip in before the watch.
                self.watch = Some(watch::Watch::start(
                    &self.config.endpoint,
                    &self.config.key,
                    held.revision + 1,
                ));
                false
            }
        }
    }

    fn register(&mut self, node: NodeId, disk: Option<u32>) -> Result<Registration, ControlError> {
        let key = format!("{}/nodes/{node}", self.config.key);
        let location = format!("etcd {} key {key}", self.config.endpoint);
        let stored = self.range_raw(&key)?;
        let (last, mod_revision) = match stored {
            None => (None, None),
            Some((bytes, m)) => {
                let r: Registration =
                    serde_json::from_slice(&bytes).map_err(|e| ControlError::Corrupt {
                        location: location.clone(),
                        reason: e.to_string(),
                    })?;
                (Some(r), Some(m))
            }
        };
        let next =
            Registration::next(last, disk).map_err(|registered| ControlError::StaleDisk {
                location: location.clone(),
                node,
                disk: disk.unwrap_or_default(),
                registered,
            })?;
        let value = serde_json::to_vec(&next)
            .expect("invariant broken: a registration always serializes to JSON");
        if !self.txn_raw(&key, mod_revision, &value)? {
            // Another process of the same node registered in between: two
            // processes of one node at once, which the node must not run.
            return Err(self.etcd_error(format!(
                "{key}: another process of node {node} registered at the same time"
            )));
        }
        Ok(next)
    }
}
