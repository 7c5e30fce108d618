//! The interactive session (`accl` with no arguments; see REPL.md).
//!
//! On a terminal it is a rustyline editor with highlighting, completion and
//! a history file; with piped standard input it reads lines, prints no
//! prompts or colours, and exits with status 1 if any input failed.
//! An input continues over several lines while a bracket is open
//! (`input`); a line starting with `:` is a meta-command (`meta`).
//! Ctrl-C while an input runs stops it through the engine's progress
//! callback; the session and its state stay.

mod commands;
mod complete;
mod highlight;
mod input;
mod meta;
mod show;

use crate::cli::BackendChoice;
use crate::Engine;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor};
pub use show::Style;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Where the session writes (stdout and stderr, or buffers in tests).
pub type Sink = Rc<RefCell<dyn Write>>;

/// What to do after an input.
pub enum Flow {
    Continue,
    Quit,
}

/// What `:time` shows of the last input.
enum LastTime {
    /// No input has run yet.
    Nothing,
    /// The input's trace (Vulkan) still records: async work it started
    /// counts until `:time` takes the trace, or the next input starts.
    Recording { wall_s: f64 },
    /// The input's trace: the table, as `accl run --time`.
    Trace {
        json: String,
        wall_s: f64,
        /// Device work was still running when the trace was taken.
        pending: bool,
    },
    /// The host backend: the wall time only.
    Host { wall_s: f64 },
    /// No table, and why.
    Missing(String),
}

/// One session: the engine and the REPL's own settings.
pub struct Session {
    pub engine: Engine,
    /// `:time on`: a time line after each input.
    pub timing: bool,
    /// `:time`: the time table of the last input.
    last_time: LastTime,
    /// Bounds-check mode (`:check`), kept across `:reset`.
    pub checks: bool,
    /// The file of the trace being recorded (`:trace FILE`).
    pub trace: Option<std::path::PathBuf>,
    pub style: Style,
    /// Inputs that failed (the exit status of a piped session).
    pub errors: usize,
    out: Sink,
    err: Sink,
    /// Set by the SIGINT handler; read by the engine's progress callback.
    interrupt: Arc<AtomicBool>,
    /// Whether the last `print` output ended a line.
    line_open: Rc<Cell<bool>>,
    /// The device current when the session started (`:reset` returns to it).
    start_device: usize,
}

impl Session {
    pub fn new(engine: Engine, style: Style, out: Sink, err: Sink) -> Session {
        let mut s = Session {
            start_device: engine.device(),
            engine,
            timing: false,
            last_time: LastTime::Nothing,
            checks: false,
            trace: None,
            style,
            errors: 0,
            out,
            err,
            interrupt: Arc::new(AtomicBool::new(false)),
            line_open: Rc::new(Cell::new(false)),
        };
        s.configure();
        s
    }

    /// The flag a SIGINT handler sets to stop the running input.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// Route `print` to the session's output and let Ctrl-C stop an input.
    fn configure(&mut self) {
        self.engine.set_checks(self.checks);
        let out = self.out.clone();
        let open = self.line_open.clone();
        self.engine.set_print(move |s| {
            if s.is_empty() {
                return;
            }
            let mut o = out.borrow_mut();
            let _ = o.write_all(s.as_bytes());
            let _ = o.flush();
            open.set(!s.ends_with('\n'));
        });
        let flag = self.interrupt.clone();
        self.engine
            .on_progress(1 << 12, move |_| !flag.load(Ordering::Relaxed));
    }

    /// `:reset`: a fresh engine on the same kind of backend.
    fn reset(&mut self) -> Result<(), String> {
        let choice = if self.engine.backend_name() == "host" {
            BackendChoice::Host
        } else {
            BackendChoice::Device(self.start_device)
        };
        self.engine = crate::cli::new_engine(choice)?;
        self.last_time = LastTime::Nothing;
        self.configure();
        Ok(())
    }

    fn say(&mut self, text: &str) {
        let mut o = self.out.borrow_mut();
        let _ = writeln!(o, "{text}");
        let _ = o.flush();
    }

    fn error(&mut self, text: &str) {
        self.errors += 1;
        let msg = format!("{} {text}", self.style.paint(highlight::RED, "error:"));
        let mut e = self.err.borrow_mut();
        let _ = writeln!(e, "{msg}");
        let _ = e.flush();
    }

    fn diagnostic(&mut self, err: &crate::Error) {
        self.errors += 1;
        let text = if self.style.color {
            err.reports()
                .iter()
                .map(|r| format!("{r:?}"))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            err.render(100)
        };
        let mut e = self.err.borrow_mut();
        let _ = writeln!(e, "{}", text.trim_end());
        let _ = e.flush();
    }

    /// End a line that `print` left open, so that what follows starts at
    /// the left margin.
    fn close_print_line(&mut self) {
        if self.line_open.replace(false) {
            let mut o = self.out.borrow_mut();
            let _ = writeln!(o);
            let _ = o.flush();
        }
    }

    /// Evaluate one complete input and print its value, error and time.
    pub fn input(&mut self, src: &str) {
        let src = input::with_final_semicolon(src);
        self.run(|e| e.eval(&src));
    }

    /// After Ctrl-C stopped an input: wait for the device work it started
    /// (a kernel stops no sooner than its dispatch ends), so that none of
    /// it runs on under the next input, and report its fault as this
    /// input's. A second Ctrl-C stops the wait.
    fn interrupted(&mut self, e: &crate::Error) {
        let t = Instant::now();
        let finished = self.engine.finish_device_work();
        let again = self.interrupt.swap(false, Ordering::Relaxed);
        let waited = t.elapsed();
        let after = if waited.as_millis() >= 1 {
            format!(
                " (after {} ms waiting for its device work)",
                waited.as_millis()
            )
        } else {
            String::new()
        };
        match finished {
            Ok(()) => self.error(&format!(
                "interrupted (Ctrl-C){after}; variables are as before this input"
            )),
            Err(_) if again => self.error(
                "interrupted (Ctrl-C) twice: the device work this input started may still be \
                 running, and the next input waits for it first",
            ),
            Err(f) => {
                self.error(&format!(
                    "interrupted (Ctrl-C){after}; variables are as before this input, and the \
                     device work it started failed:"
                ));
                self.diagnostic(&f);
            }
        }
        // Stopped by something else first (an error of its own).
        if e.code() != "accl::run::aborted" {
            self.diagnostic(e);
        }
    }

    /// `:load FILE`
    fn load(&mut self, path: &str) {
        let path = path.to_string();
        self.run(move |e| e.run_file(&path));
    }

    fn run(
        &mut self,
        f: impl FnOnce(&mut Engine) -> Result<Option<crate::engine::Val>, crate::Error>,
    ) {
        self.interrupt.store(false, Ordering::Relaxed);
        // Each input is traced (on a device backend, unless `:trace`
        // records), for the time table `:time` prints.
        if let LastTime::Recording { .. } = self.last_time {
            let _ = self.engine.take_trace();
        }
        let own_trace = self.trace.is_none() && self.engine.start_trace().is_ok();
        let t = Instant::now();
        let r = f(&mut self.engine);
        let total = t.elapsed();
        let wall_s = total.as_secs_f64();
        self.last_time = if own_trace {
            LastTime::Recording { wall_s }
        } else if self.engine.backend_name() == "host" {
            LastTime::Host { wall_s }
        } else if self.trace.is_some() {
            LastTime::Missing("a `:trace` was recording it (the trace file has every event)".into())
        } else {
            LastTime::Missing("its trace could not be started".into())
        };
        let interrupted = self.interrupt.swap(false, Ordering::Relaxed);
        self.close_print_line();
        match r {
            Ok(Some(v)) => {
                let text = show::value(&v, self.style);
                self.say(&text);
            }
            Ok(None) => {}
            Err(e) if interrupted => self.interrupted(&e),
            Err(e) => self.diagnostic(&e),
        }
        // Vulkan validation-layer messages (with ACCL_VALIDATION=1).
        for m in self.engine.take_validation_messages() {
            let m = self
                .style
                .paint(highlight::RED, &format!("validation: {m}"));
            let mut e = self.err.borrow_mut();
            let _ = writeln!(e, "{m}");
        }
        if self.timing {
            let ph = self.engine.last_timings();
            let ops = self.engine.operations();
            let mut text = format!(
                "time: {} (check {}, compile {}, run {})",
                show::duration(total),
                show::duration(ph.check),
                show::duration(ph.compile),
                show::duration(ph.run)
            );
            if ops > 0 {
                text.push_str(&format!(
                    " ({ops} host operation{})",
                    if ops == 1 { "" } else { "s" }
                ));
            }
            let text = self.style.dim(&text);
            self.say(&text);
        }
    }

    /// Stop the last input's trace, if it still records, keeping it for
    /// `:time` (async work still running is not in it).
    fn settle_time(&mut self) {
        if let LastTime::Recording { wall_s } = self.last_time {
            self.last_time = match self.engine.take_trace() {
                Ok(json) => LastTime::Trace {
                    json,
                    wall_s,
                    pending: !self.engine.pending().is_empty(),
                },
                Err(m) => LastTime::Missing(format!("its trace could not be taken: {m}")),
            };
        }
    }

    /// `:time`: the time table of the last input.
    fn time_table(&mut self) {
        self.settle_time();
        let text = match &self.last_time {
            LastTime::Nothing => {
                "no input has run yet; `:time` shows where the last one's time went".to_string()
            }
            LastTime::Trace {
                json,
                wall_s,
                pending,
            } => {
                let mut t = crate::timing::table(json, *wall_s);
                if *pending {
                    t.push_str(
                        "(device work still running when the table was taken is not counted; \
                         a `wait` in the input counts it)\n",
                    );
                }
                t
            }
            LastTime::Host { wall_s } => crate::timing::host_line(*wall_s),
            LastTime::Recording { .. } => "no time table for the last input yet".into(),
            LastTime::Missing(why) => format!("no time table for the last input: {why}"),
        };
        self.say(text.trim_end());
    }

    /// Names for completion.
    fn names(&self) -> complete::Names {
        let b = &self.engine.builtins;
        complete::Names {
            builtins: b
                .names()
                .map(str::to_string)
                .chain(b.const_names())
                .collect(),
            session: self
                .engine
                .variables()
                .into_iter()
                .map(|(n, _)| n)
                .chain(self.engine.decls.iter().map(|d| d.name.clone()))
                .collect(),
        }
    }
}

/// The rustyline helper: highlighting and completion.
struct Helper {
    names: complete::Names,
    builtins: HashSet<String>,
    /// Earlier lines of the input being typed.
    before: String,
    color: bool,
    files: FilenameCompleter,
}

impl Completer for Helper {
    type Candidate = Pair;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        match complete::complete(&self.before, line, pos, &self.names) {
            Some((start, v)) => Ok((
                start,
                v.into_iter()
                    .map(|s| Pair {
                        display: s.clone(),
                        replacement: s,
                    })
                    .collect(),
            )),
            None => self.files.complete(line, pos, ctx),
        }
    }
}

impl Hinter for Helper {
    type Hint = String;
}

impl Validator for Helper {}

impl Highlighter for Helper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if !self.color {
            return Cow::Borrowed(line);
        }
        Cow::Owned(highlight::highlight(&self.before, line, &|n| {
            self.builtins.contains(n)
        }))
    }
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        if self.color {
            Cow::Owned(format!("{}{prompt}{}", highlight::DIM, highlight::RESET))
        } else {
            Cow::Borrowed(prompt)
        }
    }
    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.color
    }
}

impl rustyline::Helper for Helper {}

const PROMPT: &str = "accl> ";
const MORE: &str = "  ... ";

/// The history file: `$ACCL_HISTORY` (empty: no history), else
/// `history` in the `accl` folder of the user's data directory.
fn history_path() -> Option<PathBuf> {
    match std::env::var_os("ACCL_HISTORY") {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => dirs::data_dir().map(|d| d.join("accl").join("history")),
    }
}

fn use_color() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Run an interactive session on `engine` until the user quits.
pub fn run(engine: Engine) -> ExitCode {
    let tty = std::io::stdin().is_terminal();
    let style = Style {
        color: tty && use_color(),
    };
    let out: Sink = Rc::new(RefCell::new(std::io::stdout()));
    let err: Sink = Rc::new(RefCell::new(std::io::stderr()));
    let session = Session::new(engine, style, out, err);
    // Ctrl-C: stop the running input. Idle on a terminal, rustyline reads
    // Ctrl-C as a key (raw mode) and this handler does not run; idle with
    // piped input, Ctrl-C ends the program as usual.
    let busy = Arc::new(AtomicBool::new(false));
    {
        let flag = session.interrupt_flag();
        let busy = busy.clone();
        let _ = ctrlc::set_handler(move || {
            if busy.load(Ordering::SeqCst) || tty {
                flag.store(true, Ordering::SeqCst);
            } else {
                std::process::exit(130);
            }
        });
    }
    if tty {
        run_tty(session, busy)
    } else {
        run_piped(session, busy)
    }
}

fn run_piped(mut s: Session, busy: Arc<AtomicBool>) -> ExitCode {
    let stdin = std::io::stdin();
    let mut pending = String::new();
    let mut lines = stdin.lock().lines();
    loop {
        let line = match lines.next() {
            Some(Ok(l)) => l,
            Some(Err(e)) => {
                s.error(&format!("cannot read standard input: {e}"));
                break;
            }
            None => break,
        };
        let line = bare_command(&s, &line).unwrap_or(line);
        if pending.is_empty() && line.trim_start().starts_with(':') {
            busy.store(true, Ordering::SeqCst);
            let flow = s.meta(&line);
            busy.store(false, Ordering::SeqCst);
            if let Flow::Quit = flow {
                return exit_code(&s);
            }
            continue;
        }
        if !pending.is_empty() {
            pending.push('\n');
        }
        pending.push_str(&line);
        if pending.trim().is_empty() {
            pending.clear();
            continue;
        }
        if input::needs_more(&pending) {
            continue;
        }
        busy.store(true, Ordering::SeqCst);
        s.input(&std::mem::take(&mut pending));
        busy.store(false, Ordering::SeqCst);
    }
    if !pending.trim().is_empty() {
        // Unclosed brackets at the end: let the parser say what is missing.
        s.input(&pending);
    }
    exit_code(&s)
}

fn exit_code(s: &Session) -> ExitCode {
    if s.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn run_tty(mut s: Session, busy: Arc<AtomicBool>) -> ExitCode {
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_dups(true)
        .and_then(|c| c.max_history_size(2000))
        .map(|c| c.completion_type(CompletionType::List).build());
    let editor = config.and_then(Editor::<Helper, DefaultHistory>::with_config);
    let mut ed = match editor {
        Ok(ed) => ed,
        Err(e) => {
            // No usable terminal after all: read lines plainly.
            errln!("accl: line editor unavailable ({e}); reading plain lines");
            return run_piped(s, busy);
        }
    };
    let builtins: HashSet<String> = s.engine.builtins.names().map(str::to_string).collect();
    ed.set_helper(Some(Helper {
        names: complete::Names::default(),
        builtins,
        before: String::new(),
        color: s.style.color,
        files: FilenameCompleter::new(),
    }));
    let history = history_path();
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = ed.load_history(h);
    }
    let devices = s.engine.devices().len();
    let banner = format!(
        "accl {} on the {} backend ({devices} device{}). `:help` lists the commands; Ctrl-D exits.",
        env!("CARGO_PKG_VERSION"),
        s.engine.backend_name(),
        if devices == 1 { "" } else { "s" }
    );
    let banner = s.style.dim(&banner);
    s.say(&banner);
    let mut pending = String::new();
    loop {
        let names = s.names();
        if let Some(h) = ed.helper_mut() {
            h.names = names;
            h.before = pending.clone();
        }
        let prompt = if pending.is_empty() { PROMPT } else { MORE };
        match ed.readline(prompt) {
            Ok(line) => {
                let line = if pending.is_empty() {
                    bare_command(&s, &line).unwrap_or(line)
                } else {
                    line
                };
                if pending.is_empty() && line.trim_start().starts_with(':') {
                    let _ = ed.add_history_entry(line.trim());
                    busy.store(true, Ordering::SeqCst);
                    let flow = s.meta(&line);
                    busy.store(false, Ordering::SeqCst);
                    if let Flow::Quit = flow {
                        break;
                    }
                    continue;
                }
                if !pending.is_empty() {
                    pending.push('\n');
                }
                pending.push_str(&line);
                if pending.trim().is_empty() {
                    pending.clear();
                    continue;
                }
                if input::needs_more(&pending) {
                    continue;
                }
                let src = std::mem::take(&mut pending);
                let _ = ed.add_history_entry(src.as_str());
                busy.store(true, Ordering::SeqCst);
                s.input(&src);
                busy.store(false, Ordering::SeqCst);
            }
            Err(ReadlineError::Interrupted) => {
                if pending.is_empty() {
                    let m = s
                        .style
                        .dim("(Ctrl-C: to leave, press Ctrl-D or type :quit)");
                    s.say(&m);
                } else {
                    pending.clear();
                    let m = s.style.dim("(input discarded)");
                    s.say(&m);
                }
            }
            // Ctrl-D on an empty line: leaves at the main prompt; on a
            // continuation line, drops the unfinished input instead.
            Err(ReadlineError::Eof) if pending.is_empty() => break,
            Err(ReadlineError::Eof) => {
                pending.clear();
                let m = s.style.dim("(Ctrl-D: unfinished input discarded)");
                s.say(&m);
            }
            Err(e) => {
                s.error(&format!("cannot read the terminal: {e}"));
                break;
            }
        }
    }
    if let Some(h) = &history {
        if let Err(e) = ed.save_history(h) {
            let m = s
                .style
                .dim(&format!("(history not saved to {}: {e})", h.display()));
            s.say(&m);
        }
    }
    ExitCode::SUCCESS
}

/// `exit`, `quit` and `help` typed alone (as in Python's REPL) are the
/// meta commands, unless the session has a variable of that name.
fn bare_command(s: &Session, line: &str) -> Option<String> {
    let w = line.trim().trim_end_matches(';').trim();
    let cmd = match w {
        "exit" | "quit" => ":quit",
        "help" => ":help",
        _ => return None,
    };
    if s.engine.variables().iter().any(|(n, _)| n == w) {
        return None;
    }
    Some(cmd.to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A shared text buffer.
    #[derive(Clone, Default)]
    pub struct Buf(Rc<RefCell<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buf {
        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.borrow()).into_owned()
        }
    }

    /// A plain session on the host whose output and errors both go to the
    /// returned buffer.
    pub fn session() -> (Session, Buf) {
        let b = Buf::default();
        let sink: Sink = Rc::new(RefCell::new(b.clone()));
        let s = Session::new(
            crate::cli::new_engine(BackendChoice::Host).unwrap(),
            Style { color: false },
            sink.clone(),
            sink,
        );
        (s, b)
    }

    #[test]
    fn values_errors_and_state() {
        let (mut s, out) = session();
        s.input("let a = arange(f32, 5);");
        s.input("a");
        s.input("let b = a[9];");
        s.input("a[4] * 2.0");
        s.input("print(\"no newline\")");
        s.input("1 + 1");
        let o = out.text();
        assert!(o.contains("f32[], shape [5]\n[0 1 2 3 4]\n"), "{o}");
        assert!(
            o.contains("index_out_of_bounds") || o.contains("out of bounds"),
            "{o}"
        );
        assert!(o.contains("8 : f32\n"), "{o}");
        // A line that `print` left open is closed before the next output.
        assert!(o.contains("no newline\n2 : i32\n"), "{o}");
        assert_eq!(s.errors, 1);
        assert!(s.engine.variables().iter().all(|(n, _)| n != "b"));
    }

    #[test]
    fn interrupt_stops_a_running_input() {
        let (mut s, out) = session();
        s.input("let k = 1;");
        let flag = s.interrupt_flag();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        });
        // `run` clears the flag before it starts; the thread sets it later.
        s.input("while true { k = k + 1; }");
        t.join().unwrap();
        s.input("k");
        let o = out.text();
        assert!(o.contains("interrupted (Ctrl-C)"), "{o}");
        assert!(o.contains("1 : i32"), "{o}");
    }

    #[test]
    fn completion_names() {
        let (mut s, _) = session();
        s.input("let alpha = 1; fn twice(x: i32) -> i32 { return 2 * x; }");
        let n = s.names();
        assert!(n.session.contains(&"alpha".to_string()));
        assert!(n.session.contains(&"twice".to_string()));
        assert!(n.builtins.contains(&"zeros".to_string()));
    }
}
