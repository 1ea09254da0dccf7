"""OpenCode (not runnable here: written against ``opencode-ai`` 1.18.33 as described in
notes/hosts.md and OpenCode's plugin and MCP documentation).

OpenCode has no shell hooks, so we install a small plugin we own entirely,
``~/.config/opencode/plugins/aletheia.js`` (``--project``: ``<dir>/.opencode/plugins/``), that
hands each event to the same stdlib hook every other host runs (one capture path) and pushes
the context block into the system prompt.  The MCP server goes in ``opencode.json``'s ``mcp``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aletheia.install import base

NAME = "opencode"
WRITTEN_AGAINST = "opencode-ai 1.18.33 (plugin API from its docs; not run here)"

PLUGIN = """\
// aletheia capture plugin for OpenCode: written by `aletheia install opencode`, removed by
// `aletheia uninstall opencode` (edits here are overwritten).  Written against opencode-ai
// 1.18.33.  Each event goes to aletheia's stdlib hook as a Claude-shaped payload; the hook
// always exits 0 within ~150 ms, and nothing here can throw into OpenCode.
import { spawn, spawnSync } from "node:child_process";

const PYTHON = __PYTHON__;
const HOOK = __HOOK__;
const ARGS = ["-I", "-S", HOOK, "opencode"];

function send(event, payload) {
  try {
    const child = spawn(PYTHON, [...ARGS, event], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  } catch {}
}

function contextBlock(payload) {
  try {
    const r = spawnSync(PYTHON, [...ARGS, "SessionStart"], {
      input: JSON.stringify(payload), encoding: "utf8", timeout: 2000,
    });
    return (r.stdout || "").trim();
  } catch {
    return "";
  }
}

export const AletheiaPlugin = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const blocks = new Map();
  const args = new Map();
  return {
    "chat.message": async (input, output) => {
      const parts = (output && output.parts) || [];
      const prompt = parts.filter((p) => p && p.type === "text").map((p) => p.text).join("\\n");
      send("UserPromptSubmit", {
        session_id: input.sessionID, cwd, prompt,
        turn_id: (output && output.message && output.message.id) || input.messageID,
      });
    },
    "tool.execute.before": async (input, output) => {
      if (input && input.callID) args.set(input.callID, output && output.args);
    },
    "tool.execute.after": async (input, output) => {
      const toolInput = args.get(input.callID);
      args.delete(input.callID);
      send("PostToolUse", {
        session_id: input.sessionID, cwd, tool_name: input.tool, tool_input: toolInput,
        tool_response: output && output.output, tool_use_id: input.callID,
      });
    },
    "experimental.chat.system.transform": async (input, output) => {
      const sid = (input && input.sessionID) || "";
      if (!blocks.has(sid)) blocks.set(sid, contextBlock({ session_id: sid, cwd, source: "startup" }));
      const block = blocks.get(sid);
      if (block && output && Array.isArray(output.system)) output.system.push(block);
    },
    event: async ({ event }) => {
      if (event && event.type === "session.idle") {
        send("Stop", { session_id: event.properties && event.properties.sessionID, cwd });
      }
    },
  };
};
"""


def plugin_source() -> str:
    return (PLUGIN.replace("__PYTHON__", json.dumps(base.python()))
            .replace("__HOOK__", json.dumps(str(base.hook_script()))))


def _mcp_entry() -> dict[str, Any]:
    server = base.mcp_server()
    return {"type": "local", "command": [server["command"], *server["args"]], "enabled": True}


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    if project is not None:
        plugin, config = project / ".opencode" / "plugins" / "aletheia.js", project / "opencode.json"
    else:
        root = home / ".config" / "opencode"
        plugin, config = root / "plugins" / "aletheia.js", root / "opencode.json"
    p = base.Plan(NAME, action)
    jsonc = config.with_suffix(".jsonc")
    if action == "install":
        p.edits.append(base.whole_file(plugin, plugin_source(), what="capture plugin"))
        if mcp and jsonc.exists() and not config.exists():
            p.notes.append(f"{jsonc} has comments this installer will not rewrite: add "
                           f'"mcp": {{"{base.MCP_NAME}": {json.dumps(_mcp_entry())}}} by hand.')
        elif mcp:
            p.edits.append(base.json_edit(
                config, lambda d: base.set_mcp(d, _mcp_entry(), key="mcp"), what="MCP server"))
        p.notes.append(f"Written against {WRITTEN_AGAINST}.")
    else:
        p.edits.append(base.whole_file(plugin, None, what="capture plugin"))
        p.edits.append(base.json_edit(config, lambda d: base.remove_mcp(d, key="mcp"),
                                      what="MCP server"))
    return p
