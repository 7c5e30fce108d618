//! Timeline traces (`accl run --trace out.json`, `:trace FILE`,
//! [`crate::Engine::start_trace`]): the Chrome trace event format, which
//! Perfetto (ui.perfetto.dev) and `chrome://tracing` open.
//!
//! Tracks: process 0 is the host (one thread: kernel launches, waits and
//! submissions as the interpreter did them); process `d + 1` is device `d`,
//! one thread per accl queue, with every kernel, copy and fill recorded on
//! it at the device's own timestamps (timestamp queries). Device times are
//! put on the host clock by a calibration per device when the trace starts
//! (or the device opens): a timestamped fill is submitted and waited for,
//! and its end is taken to be the moment the host saw it finish. The error
//! is at most that wait's latency (tens of microseconds), the same for every
//! event of a device, so the order and overlap of device work are exact.

use crate::interp::queue::QueueId;
use serde_json::{json, Value};
use std::time::Instant;

/// One complete (`"X"`) or instant (`"i"`) event.
struct Event {
    name: String,
    cat: &'static str,
    /// 0: host; d + 1: device d.
    pid: usize,
    tid: String,
    ts_us: f64,
    dur_us: Option<f64>,
}

/// Events of a trace being recorded.
pub struct TraceLog {
    t0: Instant,
    events: Vec<Event>,
    /// Per device: host microseconds minus device nanoseconds / 1000.
    offsets: Vec<Option<f64>>,
    /// Leave out device operations that started before the trace (work
    /// of earlier inputs finishing while this one was recorded).
    pub since_start_only: bool,
}

impl Default for TraceLog {
    fn default() -> Self {
        TraceLog::new()
    }
}

impl TraceLog {
    pub fn new() -> TraceLog {
        TraceLog {
            t0: Instant::now(),
            events: Vec::new(),
            offsets: Vec::new(),
            since_start_only: false,
        }
    }

    /// Microseconds since the trace started.
    pub fn now_us(&self) -> f64 {
        self.t0.elapsed().as_secs_f64() * 1e6
    }

    pub fn us_of(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.t0).as_secs_f64() * 1e6
    }

    /// A host event from `start` to now.
    pub fn host(&mut self, name: String, cat: &'static str, start: Instant) {
        let ts = self.us_of(start);
        let dur = (self.now_us() - ts).max(0.0);
        self.events.push(Event {
            name,
            cat,
            pid: 0,
            tid: "host".into(),
            ts_us: ts,
            dur_us: Some(dur),
        });
    }

    /// A kernel's compile (SPIR-V and pipeline), on the `compile` track:
    /// ahead of its launch on a worker thread, or at the launch.
    pub fn compile(&mut self, dev: usize, name: &str, ahead: bool, start: Instant, end: Instant) {
        let ts = self.us_of(start);
        self.events.push(Event {
            name: format!(
                "compile {name} on device {dev} {}",
                if ahead { "ahead" } else { "at launch" }
            ),
            cat: "compile",
            pid: 0,
            tid: "compile".into(),
            ts_us: ts,
            dur_us: Some((self.us_of(end) - ts).max(0.0)),
        });
    }

    /// A batch submitted on a queue (an instant on the host track).
    pub fn submit(&mut self, dev: usize, queue: QueueId, value: u64, at: Instant) {
        let ts = self.us_of(at);
        self.events.push(Event {
            name: format!("submit device {dev} {} (value {value})", queue.track()),
            cat: "submit",
            pid: 0,
            tid: "host".into(),
            ts_us: ts,
            dur_us: None,
        });
    }

    pub fn has_offset(&self, dev: usize) -> bool {
        self.offsets.get(dev).is_some_and(|o| o.is_some())
    }

    /// Device `dev`'s timestamp `end_ns` was observed at host time `seen`.
    pub fn calibrate(&mut self, dev: usize, end_ns: u64, seen: Instant) {
        if self.offsets.len() <= dev {
            self.offsets.resize(dev + 1, None);
        }
        // (`seen` may be before the trace started: a kept calibration.)
        let seen_us = match seen.checked_duration_since(self.t0) {
            Some(d) => d.as_secs_f64() * 1e6,
            None => -(self.t0.duration_since(seen).as_secs_f64() * 1e6),
        };
        self.offsets[dev] = Some(seen_us - end_ns as f64 / 1000.0);
    }

    /// A device operation between device timestamps `start_ns..end_ns`.
    pub fn device(&mut self, dev: usize, track: String, label: String, start_ns: u64, end_ns: u64) {
        let Some(Some(off)) = self.offsets.get(dev).copied() else {
            return;
        };
        let ts_us = start_ns as f64 / 1000.0 + off;
        if self.since_start_only && ts_us < 0.0 {
            return;
        }
        let cat = if label.starts_with("kernel") {
            "kernel"
        } else {
            "copy"
        };
        self.events.push(Event {
            name: label,
            cat,
            pid: dev + 1,
            tid: track,
            ts_us,
            dur_us: Some(end_ns.saturating_sub(start_ns) as f64 / 1000.0),
        });
    }

    /// The trace as Chrome trace-event JSON. `devices` names each device.
    pub fn to_json(&self, devices: &[String]) -> String {
        let mut ev: Vec<Value> = Vec::with_capacity(self.events.len() + 8);
        ev.push(json!({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "host"}}));
        for (i, d) in devices.iter().enumerate() {
            ev.push(json!({"ph": "M", "name": "process_name", "pid": i + 1,
                "args": {"name": format!("device {i}: {d}")}}));
        }
        let mut events: Vec<&Event> = self.events.iter().collect();
        events.sort_by(|a, b| a.ts_us.total_cmp(&b.ts_us));
        for e in events {
            let mut v = json!({
                "name": e.name, "cat": e.cat, "pid": e.pid, "tid": e.tid,
                "ts": e.ts_us,
            });
            match e.dur_us {
                Some(d) => {
                    v["ph"] = json!("X");
                    v["dur"] = json!(d);
                }
                None => {
                    v["ph"] = json!("i");
                    v["s"] = json!("t");
                }
            }
            ev.push(v);
        }
        serde_json::to_string(&json!({"traceEvents": ev, "displayTimeUnit": "ms"}))
            .unwrap_or_else(|_| "{}".into())
    }
}
