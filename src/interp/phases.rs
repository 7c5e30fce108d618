//! Host time by phase for `accl run --time`: the time spent in compiled
//! host code (each call into it), in file I/O builtins, opening devices and
//! importing host memory, summed on the thread that runs the program; and
//! where the Vulkan backend's start and end went. Off unless [`start`]
//! turned it on: then each of those calls reads the clock twice; off, it
//! reads one relaxed atomic flag, so a normal run pays nothing measurable.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ON: AtomicBool = AtomicBool::new(false);

/// A phase's calls and total time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub count: u64,
    pub time: Duration,
}

/// What [`stop`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Calls into compiled host code (functions and loops).
    pub native: Spent,
    /// Of the calls into compiled host code, the loops (plain loops and
    /// constructs' loop nests) that ran on several threads.
    pub spread: Spent,
    /// The file I/O builtins (`load_*`, `save_*`, `write_png`).
    pub io: Spent,
    /// Waiting for a device to open at its first use (the driver's own
    /// start, about half a second on an NVIDIA GPU, as a CUDA context's):
    /// all of a synchronous open, the rest of one on a thread of its own.
    pub open: Spent,
    /// The opens that ran on a thread of their own while the program ran,
    /// and how long they took there.
    pub open_behind: Spent,
    /// Of that, the time the program did not wait for.
    pub open_hidden: Duration,
    /// Where the opens' time went, summed over devices.
    pub open_parts: OpenParts,
    /// Host arrays imported for direct copies (the driver pins their
    /// pages), and their bytes.
    pub import: Spent,
    pub import_bytes: u64,
}

/// Where opening a device went (`vk_runtime::OpenTimes` and the pipeline
/// cache accl keeps on disk).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpenParts {
    pub adapters: Duration,
    pub create: Duration,
    pub setup: Duration,
    pub cache: Duration,
    /// The Vulkan queues made (each costs `create` time on some drivers).
    pub queues: usize,
}

impl OpenParts {
    fn add(&mut self, o: OpenParts) {
        self.adapters += o.adapters;
        self.create += o.create;
        self.setup += o.setup;
        self.cache += o.cache;
        self.queues += o.queues;
    }
}

/// Where the Vulkan backend's end went (after the wall): the arrays still
/// present on devices released, then the devices (their pending work,
/// memory, queues and `vkDestroyDevice`); the instance goes after.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndParts {
    pub present: Duration,
    pub devices: Duration,
}

/// Where the Vulkan backend's start went (before the wall: the instance
/// and the list of adapters).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartParts {
    pub loader: Duration,
    pub instance: Duration,
    pub adapters: Duration,
}

thread_local! {
    static NOW: Cell<Phases> = Cell::new(Phases::default());
    static START: Cell<Option<StartParts>> = const { Cell::new(None) };
    static END: Cell<Option<EndParts>> = const { Cell::new(None) };
}

/// A Vulkan backend dropped on this thread ended this way.
pub fn backend_ended(parts: EndParts) {
    END.with(|s| s.set(Some(parts)));
}

/// How the last Vulkan backend dropped on this thread ended (taken).
pub fn backend_end() -> Option<EndParts> {
    END.with(Cell::take)
}

/// A Vulkan backend started on this thread, this way.
pub fn backend_started(parts: StartParts) {
    START.with(|s| s.set(Some(parts)));
}

/// How the last Vulkan backend started on this thread started.
pub fn backend_start() -> Option<StartParts> {
    START.with(Cell::get)
}

/// Start counting (from zero) on this thread.
pub fn start() {
    NOW.with(|p| p.set(Phases::default()));
    ON.store(true, Ordering::Relaxed);
}

/// Stop counting; what this thread spent since [`start`].
pub fn stop() -> Phases {
    ON.store(false, Ordering::Relaxed);
    NOW.with(Cell::take)
}

/// The clock now, when counting.
#[inline]
pub fn clock() -> Option<Instant> {
    ON.load(Ordering::Relaxed).then(Instant::now)
}

fn add(t0: Option<Instant>, which: impl FnOnce(&mut Phases) -> &mut Spent) {
    if let Some(t0) = t0 {
        NOW.with(|p| {
            let mut now = p.get();
            let s = which(&mut now);
            s.count += 1;
            s.time += t0.elapsed();
            p.set(now);
        });
    }
}

/// A device opened, in `parts`: the wait for it began at `t0` ([`clock`]);
/// `behind`: it opened on a thread of its own, in that time.
pub fn opened(t0: Option<Instant>, behind: Option<Duration>, parts: OpenParts) {
    if let Some(t0) = t0 {
        NOW.with(|p| {
            let mut now = p.get();
            now.open_parts.add(parts);
            if let Some(took) = behind {
                now.open_behind.count += 1;
                now.open_behind.time += took;
                now.open_hidden += took.saturating_sub(t0.elapsed());
            }
            p.set(now);
        });
    }
    add(t0, |p| &mut p.open);
}

/// A call into compiled code that began at `t0` ([`clock`]) ended.
#[inline]
pub fn native(t0: Option<Instant>) {
    add(t0, |p| &mut p.native);
}

/// A plain loop that began at `t0` ([`clock`]) ran on several threads.
pub fn spread(t0: Option<Instant>) {
    add(t0, |p| &mut p.spread);
}

/// `bytes` of a host array were imported, from `t0` ([`clock`]) on.
pub fn imported(t0: Option<Instant>, bytes: usize) {
    if t0.is_some() {
        NOW.with(|p| {
            let mut now = p.get();
            now.import_bytes += bytes as u64;
            p.set(now);
        });
    }
    add(t0, |p| &mut p.import);
}

/// The clock now, when counting and builtin `name` reads or writes a file.
#[inline]
pub fn io_clock(name: &str) -> Option<Instant> {
    if !ON.load(Ordering::Relaxed) {
        return None;
    }
    let file = name.starts_with("load_") || name.starts_with("save_") || name == "write_png";
    file.then(Instant::now)
}

/// A file builtin that began at `t0` ([`io_clock`]) ended.
#[inline]
pub fn io(t0: Option<Instant>) {
    add(t0, |p| &mut p.io);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_only_between_start_and_stop() {
        native(clock());
        assert_eq!(io_clock("load_csv"), None);
        start();
        let t = clock();
        std::thread::sleep(Duration::from_millis(2));
        native(t);
        io(io_clock("save_npy"));
        io(io_clock("write_png"));
        assert_eq!(io_clock("len"), None);
        let p = stop();
        assert_eq!(p.native.count, 1);
        assert!(p.native.time >= Duration::from_millis(2), "{p:?}");
        assert_eq!(p.io.count, 2);
        native(clock());
        assert_eq!(stop(), Phases::default());
        // (One test: counting is on or off for the whole process.)
        start();
        // A synchronous open, then one that took an hour on its thread
        // (so however slow this machine, the wait is shorter) and was
        // waited for at least 2 ms of.
        let hour = Duration::from_secs(3600);
        let ms = Duration::from_millis;
        let parts = OpenParts {
            adapters: ms(1),
            create: ms(20),
            setup: ms(3),
            cache: ms(4),
            queues: 3,
        };
        opened(clock(), None, parts);
        let t = clock();
        std::thread::sleep(Duration::from_millis(2));
        opened(t, Some(hour), parts);
        let p = stop();
        assert_eq!(p.open_parts.create, ms(40), "summed over the opens");
        assert_eq!(p.open_parts.cache, ms(8));
        assert_eq!(p.open_parts.queues, 6);
        assert_eq!(p.open.count, 2);
        assert!(p.open.time >= Duration::from_millis(2), "{p:?}");
        assert_eq!(p.open_behind.count, 1);
        assert_eq!(p.open_behind.time, hour);
        assert!(p.open_hidden <= hour - Duration::from_millis(2), "{p:?}");
        assert!(p.open_hidden > Duration::ZERO, "{p:?}");
    }
}
