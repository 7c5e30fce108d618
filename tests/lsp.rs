//! `accl lsp` as an editor drives it: the built binary, JSON-RPC with
//! Content-Length framing over its stdin and stdout, from `initialize` to
//! `exit`. No device is needed (the server never opens one).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_accl"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start accl lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("a Content-Length header")];
                r.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        self.rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server within a minute")
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request and wait for its response (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{method} failed: {m}");
                return m["result"].clone();
            }
        }
    }

    /// The next `publishDiagnostics` for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.recv();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }
}

fn pos(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

const BROKEN: &str = "\
fn square(x: f32) -> f32 {
    return x * x;
}
let n = 8;
let a = zeros(f32, n);
parallel loop for i in 0..n {
    a[i] = square(i as f32);
}
let total = sum(a);
println(total + missing);
";

#[test]
fn a_session_from_initialize_to_exit() {
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["hoverProvider"], json!(true));
    assert_eq!(caps["positionEncoding"], json!("utf-16"));
    c.notify("initialized", json!({}));

    let uri = "file:///tmp/session.accl";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "accl", "version": 1, "text": BROKEN}}),
    );
    let d = c.diagnostics(uri);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["code"], "accl::name::unknown");
    assert_eq!(d[0]["severity"], 1);
    assert_eq!(
        d[0]["range"],
        json!({"start": {"line": 9, "character": 16}, "end": {"line": 9, "character": 23}})
    );
    assert!(d[0]["message"].as_str().unwrap().contains("missing"));

    // A builtin's signature needs no checked program.
    let h = c.request("textDocument/hover", pos(uri, 4, 9));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("zeros("), "{text}");

    let fixed = BROKEN.replace("missing", "1.0");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    assert_eq!(c.diagnostics(uri), Vec::<Value>::new());

    // A variable: its type.
    let h = c.request("textDocument/hover", pos(uri, 9, 10));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("total: f32"), "{text}");
    // A builtin: its signature.
    let h = c.request("textDocument/hover", pos(uri, 4, 9));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("zeros("), "{text}");
    // A function: its signature.
    let h = c.request("textDocument/hover", pos(uri, 6, 12));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("fn square(x: f32) -> f32"), "{text}");
    // A compute construct: what it captures.
    let h = c.request("textDocument/hover", pos(uri, 5, 2));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("parallel loop") && text.contains("a (written)"),
        "{text}"
    );

    // The call of `square` goes to its name in the declaration.
    let def = c.request("textDocument/definition", pos(uri, 6, 12));
    assert_eq!(def["uri"], uri);
    assert_eq!(
        def["range"],
        json!({"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 9}})
    );
    // `a`: declared, indexed in the loop, summed.
    let mut refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 4},
               "context": {"includeDeclaration": true}}),
    );
    let lines: Vec<u64> = refs
        .as_array_mut()
        .unwrap()
        .iter()
        .map(|l| l["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![4, 6, 8], "{refs}");
    // A parameter: its declaration and both uses.
    let refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 11},
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(refs.as_array().unwrap().len(), 3, "{refs}");

    // In an expression: builtins, locals and functions.
    let items = c.request("textDocument/completion", pos(uri, 9, 8));
    let names = labels(&items);
    for want in ["total", "a", "n", "sqrt", "square", "acc_copyin"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }

    // While an edit breaks the text, hover, definitions and references
    // answer from the last text that checked, shifted past the edit.
    // (two changes: an error at the end, then a line at the top)
    let broken = format!("{fixed}let oops = ;\n");
    let noted = format!("// a note\n{broken}");
    for (v, text) in [(3, &broken), (4, &noted)] {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}),
        );
        assert!(!c.diagnostics(uri).is_empty());
    }
    let h = c.request("textDocument/hover", pos(uri, 10, 10));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("total: f32"), "{text}");
    assert_eq!(h["range"]["start"], json!({"line": 10, "character": 8}));
    let def = c.request("textDocument/definition", pos(uri, 7, 12));
    assert_eq!(def["range"]["start"], json!({"line": 1, "character": 3}));
    let refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 4},
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(refs.as_array().unwrap().len(), 3, "{refs}");
    // Nothing where the edit itself is.
    assert_eq!(
        c.request("textDocument/hover", pos(uri, 11, 5)),
        Value::Null
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": fixed}]}),
    );
    assert_eq!(c.diagnostics(uri), Vec::<Value>::new());

    // After a construct keyword: its clauses.
    let uri2 = "file:///tmp/typing.accl";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri2, "languageId": "accl", "version": 1,
                                "text": "let n = 4;\nparallel "}}),
    );
    let d = c.diagnostics(uri2);
    assert!(!d.is_empty());
    let items = c.request("textDocument/completion", pos(uri2, 1, 9));
    let names = labels(&items);
    for want in ["num_gangs", "reduction", "copyin", "async"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n == "sqrt"), "{names:?}");
    // `serial` takes the clauses of `parallel` but no sizes.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri2, "version": 2},
               "contentChanges": [{"text": "let n = 4;\nserial "}]}),
    );
    let items = c.request("textDocument/completion", pos(uri2, 1, 7));
    let names = labels(&items);
    assert!(names.iter().any(|n| n == "reduction"), "{names:?}");
    for not in ["num_gangs", "num_workers", "vector_length"] {
        assert!(!names.iter().any(|n| n == not), "{not} in {names:?}");
    }

    let syms = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let syms: Vec<(String, u64)> = syms
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["kind"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        syms,
        vec![
            ("square".to_string(), 12),
            ("n".to_string(), 13),
            ("a".to_string(), 13),
            ("total".to_string(), 13),
        ]
    );

    let toks = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    assert!(toks["data"].as_array().unwrap().len() > 20);

    // Columns count UTF-16 code units: `𝔸` is two, `é` one.
    let uri3 = "file:///tmp/wide.accl";
    let wide = "let s = \"𝔸é\"; let v = 1.5; let w = v + nope;\n";
    let col = |needle: &str| wide[..wide.find(needle).unwrap()].encode_utf16().count() as u32;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri3, "languageId": "accl", "version": 1, "text": wide}}),
    );
    let d = c.diagnostics(uri3);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0]["range"],
        json!({"start": {"line": 0, "character": col("nope")},
               "end": {"line": 0, "character": col("nope") + 4}})
    );
    let fixed = wide.replace("nope", "2.0");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri3, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    assert_eq!(c.diagnostics(uri3), Vec::<Value>::new());
    let v = col("v = 1.5");
    assert_eq!(v, 19);
    let h = c.request("textDocument/hover", pos(uri3, 0, v));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("v: f64"),
        "{h}"
    );
    assert_eq!(h["range"]["start"]["character"], v);

    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn garbage_gets_answers_not_a_crash() {
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let uri = "file:///tmp/garbage.accl";
    let texts = [
        "fn (((( let ]]] 😀 \" parallel loop copyin( for",
        "let x = ;\n}}}{{{ fn f(a: f32[,,,,]) -> { return a[",
        "/* unterminated \n let y = 1",
        "parallel loop for i in 0..n { a[i] = é𝔸; }\n",
        "",
    ];
    for (v, text) in texts.iter().enumerate() {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "accl", "version": v, "text": text}}),
        );
        c.diagnostics(uri);
        for line in 0..3 {
            for ch in [0, 1, 5, 9, 17, 40, 1000] {
                for m in [
                    "textDocument/hover",
                    "textDocument/definition",
                    "textDocument/completion",
                ] {
                    c.request(m, pos(uri, line, ch));
                }
            }
        }
        c.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        c.request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    // An unknown document and an unknown method: answers, not a crash.
    assert_eq!(
        c.request("textDocument/hover", pos("file:///nowhere.accl", 0, 0)),
        Value::Null
    );
    let id = 999;
    c.send(json!({"jsonrpc": "2.0", "id": id, "method": "accl/unknown", "params": {}}));
    loop {
        let m = c.recv();
        if m["id"] == json!(id) {
            assert!(m["error"]["code"].is_i64());
            break;
        }
    }
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert!(c.child.wait().unwrap().success());
}

/// The VS Code extension is not built here; its JSON files must parse and
/// agree with each other and with the server's command line.
#[test]
fn the_vscode_extension_files_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode");
    let read = |f: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let pkg = read("package.json");
    let lang = &pkg["contributes"]["languages"][0];
    assert_eq!(lang["id"], "accl");
    assert_eq!(lang["extensions"], json!([".accl"]));
    let grammar = &pkg["contributes"]["grammars"][0];
    let tm = read(grammar["path"].as_str().unwrap());
    assert_eq!(tm["scopeName"], grammar["scopeName"]);
    let conf = read(lang["configuration"].as_str().unwrap());
    assert_eq!(conf["comments"]["lineComment"], "//");
    let js = std::fs::read_to_string(dir.join(pkg["main"].as_str().unwrap())).unwrap();
    assert!(js.contains(r#"args: ["lsp"]"#), "{js}");
}

/// The protocol's exit status for `exit` without `shutdown` is 1.
#[test]
fn exit_without_shutdown_is_status_1() {
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    c.notify("exit", Value::Null);
    assert_eq!(c.child.wait().unwrap().code(), Some(1));
}

/// A file opened with an error in one statement: hover and definitions
/// work in all the others (that statement is set aside), and an untyped
/// constant's hover says what it is.
#[test]
fn a_file_opened_broken_is_analysed_around_the_error() {
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let uri = "file:///tmp/opened_broken.accl";
    let text = "const N = 4;\nlet a = zeros(f32, N);\nlet oops = a[0] + ;\nlet b: i64 = N;\n";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "accl", "version": 1, "text": text}}),
    );
    assert!(!c.diagnostics(uri).is_empty());
    // `a` on line 1: its type.
    let h = c.request("textDocument/hover", pos(uri, 1, 4));
    let hover = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(hover.contains("a: f32[]"), "{h}");
    // `N` on line 3: an untyped integer constant, not `i64`.
    let h = c.request("textDocument/hover", pos(uri, 3, 13));
    let hover = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        hover.contains("const N = 4") && hover.contains("untyped integer"),
        "{h}"
    );
    // Its definition is line 0.
    let def = c.request("textDocument/definition", pos(uri, 3, 13));
    assert_eq!(def["range"]["start"], json!({"line": 0, "character": 6}));
    // The broken statement itself answers nothing.
    assert_eq!(c.request("textDocument/hover", pos(uri, 2, 5)), Value::Null);
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.child.wait().unwrap().code(), Some(0));
}

/// Framing: a huge `Content-Length` is skipped, not an abort; a body that
/// is not JSON-RPC is answered; a header with no usable length ends the
/// session with status 1 and says why on stderr.
#[test]
fn bad_framing_is_answered_or_ends_the_session_saying_why() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_accl"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start accl lsp");
    let mut stdin = child.stdin.take().unwrap();
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let mut input = String::new();
    input +=
        &frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    input += &frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    // 2^62 bytes announced: the server skips them and reads to the end.
    input += "Content-Length: 4611686018427387904\r\n\r\n";
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The initialize answer came; the process ended by itself, not by an
    // abort (no signal), with a line on stderr about the input ending.
    assert!(stdout.contains("\"capabilities\""), "{stdout}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("accl lsp"), "{stderr}");

    let mut child = Command::new(env!("CARGO_BIN_EXE_accl"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start accl lsp");
    let mut stdin = child.stdin.take().unwrap();
    let mut input = String::new();
    input +=
        &frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    input += &frame(r#"{"jsonrpc":"2.0","id":2,"method":7}"#);
    input += "Content-Length: twelve\r\n\r\n{}";
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"id\":2") && stdout.contains("-32700"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Content-Length: twelve") && stderr.contains("not a whole number"),
        "{stderr}"
    );
}
