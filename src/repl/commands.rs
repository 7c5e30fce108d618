//! The meta-commands (lines that start with `:`): their names, arguments
//! and help, for `:help` ([`super::meta`]), completion and highlighting.

/// One meta-command, for `:help`, completion and highlighting.
pub struct Command {
    pub name: &'static str,
    pub args: &'static str,
    pub help: &'static str,
}

pub const COMMANDS: &[Command] = &[
    Command {
        name: ":help",
        args: "",
        help: "this list",
    },
    Command {
        name: ":type",
        args: "EXPR",
        help: "the type of an expression, without running it",
    },
    Command {
        name: ":vars",
        args: "",
        help: "variables with their types, values or shapes, and where each array is present",
    },
    Command {
        name: ":present",
        args: "",
        help: "the present table of every device: array, section, structured and dynamic counts",
    },
    Command {
        name: ":queues",
        args: "",
        help: "pending work of each async queue",
    },
    Command {
        name: ":devices",
        args: "",
        help: "the devices of the backend (* marks the current one)",
    },
    Command {
        name: ":device",
        args: "N",
        help: "make device N current (as `set device_num(N);`)",
    },
    Command {
        name: ":spirv",
        args: "",
        help: "SPIR-V disassembly of the last kernel compiled",
    },
    Command {
        name: ":time",
        args: "[on|off]",
        help: "where the last input's time went (as `accl run --time`); `on`/`off`: a time line after each input",
    },
    Command {
        name: ":explain",
        args: "CODE",
        help: "how the compute constructs of CODE map onto gangs, workers and vector lanes (not run)",
    },
    Command {
        name: ":check",
        args: "on|off",
        help: "bounds-check mode for device kernels (indices, divisors); shows the state without an argument",
    },
    Command {
        name: ":trace",
        args: "FILE",
        help: "start a timeline trace written to FILE; `:trace` again stops and writes it",
    },
    Command {
        name: ":load",
        args: "FILE",
        help: "run a script in this session",
    },
    Command {
        name: ":reset",
        args: "",
        help: "forget every variable, function, present entry and queue",
    },
    Command {
        name: ":quit",
        args: "",
        help: "leave (Ctrl-D does too)",
    },
];
