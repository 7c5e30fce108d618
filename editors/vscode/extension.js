// Starts `accl lsp` for .accl files. The binary is `accl.server.path`
// (default: `accl` on the PATH).
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("accl").get("server.path", "accl");
  const server = { command, args: ["lsp"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "accl",
    "accl language server",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "accl" }, { scheme: "untitled", language: "accl" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
