//! Meta-commands: lines that start with `:` (no accl statement does).

use super::commands::COMMANDS;
use super::show;
use super::{Flow, Session};

/// Other spellings accepted.
pub const ALIASES: &[(&str, &str)] = &[
    (":h", ":help"),
    (":?", ":help"),
    (":t", ":type"),
    (":q", ":quit"),
    (":exit", ":quit"),
];

/// The canonical name of `cmd`, if it is a meta-command.
pub fn canonical(cmd: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|c| c.name)
        .find(|n| *n == cmd)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == cmd).map(|(_, n)| *n))
}

/// The text of `:help`.
pub fn help() -> String {
    let mut out = String::from(
        "Type accl statements; an expression without `;` at the end prints its value and type.\n\
         An input continues over several lines while a bracket is open.\n\n",
    );
    let w = COMMANDS
        .iter()
        .map(|c| c.name.len() + 1 + c.args.len())
        .max()
        .unwrap_or(0);
    for c in COMMANDS {
        let left = if c.args.is_empty() {
            c.name.to_string()
        } else {
            format!("{} {}", c.name, c.args)
        };
        out.push_str(&format!("  {left:<w$}  {}\n", c.help));
    }
    out.push_str(
        "\nKeys: Tab completes, Up/Down and Ctrl-R search the history, Ctrl-C interrupts a\n\
         running input (or discards the one being typed), Ctrl-D exits. See REPL.md.",
    );
    out
}

/// The message of `:spirv` when there is no kernel.
pub fn no_spirv(backend: &str) -> String {
    if backend == "host" {
        "no SPIR-V: the host backend runs parallel constructs in the interpreter, so no kernel \
         is compiled (start `accl` without `--host` on a machine with a Vulkan device)"
            .to_string()
    } else {
        "no kernel has been compiled yet in this session (run a `parallel` construct first)"
            .to_string()
    }
}

/// Strip one pair of matching quotes around a file name.
fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

impl Session {
    /// Run the meta-command line `line` (it starts with `:`).
    pub fn meta(&mut self, line: &str) -> Flow {
        let line = line.trim();
        let (cmd, arg) = match line.find(char::is_whitespace) {
            Some(i) => (&line[..i], line[i..].trim()),
            None => (line, ""),
        };
        let Some(cmd) = canonical(cmd) else {
            self.error(&format!(
                "unknown command `{cmd}`; `:help` lists the commands"
            ));
            return Flow::Continue;
        };
        let takes_arg = COMMANDS.iter().any(|c| c.name == cmd && !c.args.is_empty());
        if !takes_arg && !arg.is_empty() {
            self.error(&format!("`{cmd}` takes no argument"));
            return Flow::Continue;
        }
        match cmd {
            ":help" => self.say(&help()),
            ":type" => {
                if arg.is_empty() {
                    self.error("usage: `:type EXPR`, e.g. `:type a[0] * 2.0`");
                } else {
                    match self.engine.type_of(arg) {
                        Ok(t) => {
                            let text = format!(
                                "{arg} {}",
                                self.style.paint(super::highlight::TYPE, &format!(": {t}"))
                            );
                            self.say(&text)
                        }
                        Err(e) => self.diagnostic(&e),
                    }
                }
            }
            ":vars" => self.say(&show::vars(&self.engine, self.style)),
            ":present" => self.say(&show::present(&self.engine)),
            ":queues" => {
                let p = self.engine.pending();
                if p.is_empty() {
                    self.say("no pending work: every queue is idle");
                } else {
                    self.say(&p.join("\n"));
                }
            }
            ":devices" => {
                let cur = self.engine.device();
                let text: Vec<String> = self
                    .engine
                    .devices()
                    .iter()
                    .enumerate()
                    .map(|(k, d)| format!("{} {d}", if k == cur { "*" } else { " " }))
                    .collect();
                self.say(&text.join("\n"));
            }
            ":device" => {
                if arg.is_empty() {
                    let d = self.engine.device();
                    self.say(&format!("current device: {d}"));
                } else {
                    match arg.parse::<usize>() {
                        Err(_) => self.error(&format!(
                            "`{arg}` is not a device number; `:devices` lists them"
                        )),
                        Ok(n) => match self.engine.set_device(n) {
                            Ok(()) => self.say(&format!("current device: {n}")),
                            Err(m) => self.error(&m),
                        },
                    }
                }
            }
            ":spirv" => match self.engine.last_spirv() {
                Some(s) => self.say(s.trim_end()),
                None => {
                    let m = no_spirv(self.engine.backend_name());
                    self.say(&m)
                }
            },
            ":explain" => {
                if arg.is_empty() {
                    self.error("usage: `:explain CODE`, e.g. `:explain parallel loop for i in 0..n { y[i] = 0.0; }`");
                } else {
                    match self.engine.explain(arg) {
                        Ok(r) => self.say(r.trim_end()),
                        Err(e) => self.error(&e.render(100)),
                    }
                }
            }
            ":check" => match arg {
                "on" | "off" => {
                    self.checks = arg == "on";
                    self.engine.set_checks(self.checks);
                    self.say(&format!(
                        "bounds checks {arg}{}",
                        if self.engine.backend_name() == "host" {
                            " (the host backend always checks)"
                        } else {
                            " for kernels run from now on"
                        }
                    ));
                }
                "" => {
                    let state = if self.checks { "on" } else { "off" };
                    self.say(&format!("bounds checks are {state}"));
                }
                _ => self.error("usage: `:check on` or `:check off`"),
            },
            ":time" => match arg {
                "" => self.time_table(),
                "on" => {
                    self.timing = true;
                    self.say("timing on: each input prints its time (`:time off` turns it off)");
                }
                "off" => {
                    self.timing = false;
                    self.say("timing off");
                }
                _ => {
                    self.error("usage: `:time` (the last input's table), `:time on` or `:time off`")
                }
            },
            ":trace" => match self.trace.take() {
                Some(path) => match self.engine.stop_trace() {
                    Ok(json) => match std::fs::write(&path, json) {
                        Ok(()) => self.say(&format!(
                            "trace written to {} (open it in ui.perfetto.dev or chrome://tracing)",
                            path.display()
                        )),
                        Err(e) => self.error(&format!("cannot write {}: {e}", path.display())),
                    },
                    Err(m) => self.error(&m),
                },
                None if arg.is_empty() => {
                    self.error("usage: `:trace FILE` (then `:trace` to stop)")
                }
                None => {
                    // The last input's own trace ends first (`:time` keeps it).
                    self.settle_time();
                    match self.engine.start_trace() {
                        Ok(()) => {
                            let path = std::path::PathBuf::from(unquote(arg));
                            self.say(&format!(
                                "tracing into {}: `:trace` again stops and writes it",
                                path.display()
                            ));
                            self.trace = Some(path);
                        }
                        Err(m) => self.error(&m),
                    }
                }
            },
            ":load" => {
                if arg.is_empty() {
                    self.error("usage: `:load FILE`");
                } else {
                    self.load(unquote(arg));
                }
            }
            ":reset" => match self.reset() {
                Ok(()) => self
                    .say("session reset: variables, functions, present tables and queues are gone"),
                Err(m) => self.error(&m),
            },
            ":quit" => return Flow::Quit,
            _ => {}
        }
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::session;
    use super::*;

    #[test]
    fn every_command_has_help_and_is_canonical() {
        let h = help();
        for c in COMMANDS {
            assert!(h.contains(c.name), "{}", c.name);
            assert_eq!(canonical(c.name), Some(c.name));
        }
        for (a, n) in ALIASES {
            assert_eq!(canonical(a), Some(*n));
        }
        assert_eq!(canonical(":nope"), None);
    }

    #[test]
    fn commands() {
        let (mut s, out) = session();
        s.input("let a = zeros(f32, 8); enter data copyin(a[0:4]);");
        assert!(matches!(s.meta(":type a[1] * 2.0"), Flow::Continue));
        assert!(matches!(s.meta(":vars"), Flow::Continue));
        s.meta(":present");
        s.meta(":queues");
        s.meta(":devices");
        s.meta(":device 3");
        s.meta(":device 0");
        s.meta(":spirv");
        s.meta(":trace out.json");
        s.meta(":bogus");
        s.meta(":type");
        s.meta(":vars extra");
        s.meta(":type nope + 1");
        let o = out.text();
        assert!(o.contains("a[1] * 2.0 : f32\n"), "{o}");
        assert!(
            o.contains(
                "a  f32[]  shape [8]  present: device 0, rows 0..4 of 8 (structured 0, dynamic 1)"
            ),
            "{o}"
        );
        assert!(o.contains("0       a      [0:4] of 8"), "{o}");
        assert!(o.contains("no pending work"), "{o}");
        assert!(o.contains("* 0: host"), "{o}");
        assert!(o.contains("device 3 does not exist"), "{o}");
        assert!(o.contains("current device: 0"), "{o}");
        assert!(o.contains("no SPIR-V: the host backend"), "{o}");
        assert!(o.contains("the host backend has no device timeline"), "{o}");
        assert!(o.contains("unknown command `:bogus`"), "{o}");
        assert!(o.contains("usage: `:type EXPR`"), "{o}");
        assert!(o.contains("`:vars` takes no argument"), "{o}");
        assert!(o.contains("nope"), "{o}");
        assert!(matches!(s.meta(":q"), Flow::Quit));
        assert!(matches!(s.meta("  :quit  "), Flow::Quit));
    }

    #[test]
    fn time_load_reset() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.accl");
        std::fs::write(
            &f,
            "let loaded = arange(i32, 3);\nfor i in 0..3 { loaded[i] += 0; }\nsum(loaded)\n",
        )
        .unwrap();
        let (mut s, out) = session();
        s.meta(":time");
        s.meta(":time on");
        s.input("let x = 1;");
        s.meta(&format!(":load \"{}\"", f.display()));
        s.meta(":time off");
        s.input("x + 1");
        s.meta(":time");
        s.meta(":time sideways");
        s.meta(":load /nonexistent/file.accl");
        s.meta(":reset");
        s.input("x");
        let o = out.text();
        assert!(o.contains("timing on"), "{o}");
        assert!(o.contains("time: "), "{o}");
        // `:load` ran `sum(loaded)`: host work is counted.
        assert!(o.contains("host operation"), "{o}");
        assert!(o.contains("3 : i32\n"), "{o}");
        assert!(o.contains("2 : i32\n"), "{o}");
        // One time line per timed input (two), none after `:time off`.
        assert_eq!(o.matches("time: ").count(), 2, "{o}");
        // `:time` alone: the last input's table (the host backend's line).
        assert!(o.contains("no input has run yet"), "{o}");
        assert!(
            o.contains("(host backend: every construct ran on the host)"),
            "{o}"
        );
        assert!(o.contains("usage: `:time`"), "{o}");
        assert!(o.contains("cannot read `/nonexistent/file.accl`"), "{o}");
        assert!(o.contains("session reset"), "{o}");
        assert!(o.contains("unknown name") || o.contains("`x`"), "{o}");
        assert_eq!(s.engine.variables().len(), 0);
    }
}
