// aletheia's capture plugin for OpenCode, written against opencode-ai 1.18.33.
//
// `aletheia install opencode` lists this file under "plugin" in opencode.json, with the
// interpreter and the hook script to run as its options; `aletheia uninstall opencode` takes the
// entry out again.  It lives in aletheia's own package, never in a .opencode/ folder (OpenCode
// runs `npm install` in every .opencode/ folder it finds), and imports nothing OpenCode would
// have to install.  Each event goes to aletheia's stdlib hook as a Claude-shaped payload (one
// capture path for every host); the hook always exits 0, and nothing here throws into OpenCode.
import { spawn, spawnSync } from "node:child_process";


// `opencode run a "b c"` sends the prompt as `a "b c"` (it quotes each argument that holds a
// space): give back what the user typed.
function typed(text) {
  const argv = process.argv || [];
  const at = argv.indexOf("run");
  if (at < 0) return text;
  for (const arg of argv.slice(at + 1)) {
    if (typeof arg === "string" && arg.includes(" ")) {
      text = text.split(`"${arg.replace(/"/g, '\\"')}"`).join(arg);
    }
  }
  return text;
}

// The hook answers Claude's JSON form or plain text; either way, the text to show the model.
function contextOf(answer) {
  if (!answer) return "";
  if (answer.startsWith("{")) {
    try {
      const parsed = JSON.parse(answer);
      const hso = parsed && parsed.hookSpecificOutput;
      return (hso && hso.additionalContext) || parsed.additionalContext || "";
    } catch {
      return "";
    }
  }
  return answer;
}

// Add a synthetic text part to a user message for this request (once: OpenCode may hand the
// same message objects to the next step).
function inject(message, text, where) {
  if (!text || !Array.isArray(message.parts)) return;
  const suffix = `-aletheia-${where === "unshift" ? "session" : "prompt"}`;
  if (message.parts.some((p) => p && typeof p.id === "string" && p.id.endsWith(suffix))) return;
  const anchor = message.parts.find((p) => p && p.type === "text") || {};
  const part = {
    ...anchor, id: `${anchor.id || message.info.id}${suffix}`, type: "text", text,
    synthetic: true,
  };
  if (where === "unshift") message.parts.unshift(part);
  else message.parts.push(part);
}

export const AletheiaPlugin = async (input, options) => {
  const python = options && options.python;
  const hook = options && options.hook;
  if (typeof python !== "string" || typeof hook !== "string") return {};
  const args = (event) => ["-I", "-S", hook, "opencode", event];
  const cwd = (input && (input.directory || input.worktree)) || process.cwd();

  // Wait for the hook's answer (the block, per-prompt or per-file recall) without blocking
  // OpenCode's event loop, which goes on starting up meanwhile; "" on any failure, and after 3 s
  // whatever happens.
  const ask = (event, payload) => new Promise((resolve) => {
    try {
      let out = "";
      const child = spawn(python, args(event), { stdio: ["pipe", "pipe", "ignore"] });
      const timer = setTimeout(() => { try { child.kill(); } catch {} resolve(out.trim()); }, 3000);
      child.on("error", () => { clearTimeout(timer); resolve(""); });
      child.stdout.on("data", (chunk) => { out += chunk; });
      child.on("close", () => { clearTimeout(timer); resolve(out.trim()); });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: event, cwd, ...payload }));
    } catch {
      resolve("");
    }
  });
  // The stop: run to the end before OpenCode may exit.
  const call = (event, payload) => {
    try {
      const r = spawnSync(python, args(event), {
        input: JSON.stringify({ hook_event_name: event, cwd, ...payload }),
        encoding: "utf8", timeout: 3000, stdio: ["pipe", "pipe", "ignore"],
      });
      return (r.stdout || "").trim();
    } catch {
      return "";
    }
  };

  const blocks = new Map(); // sessionID -> the hook's answer at its start (a promise), once
  const promptBlocks = new Map(); // user message id -> what the hook answered for that prompt
  const toolArgs = new Map(); // callID -> tool arguments (tool.execute.after does not carry them)
  const roles = new Map(); // message id -> "user" | "assistant"
  const answers = new Map(); // sessionID -> the assistant's latest text (the turn's answer)
  const blockFor = (sid) => {
    if (!blocks.has(sid)) blocks.set(sid, ask("SessionStart", { session_id: sid, source: "startup" }));
    return blocks.get(sid);
  };

  return {
    "chat.message": async (inp, out) => {
      const sid = inp && inp.sessionID;
      if (!sid) return;
      // The block is read before this prompt is stored, so it never lists the prompt itself,
      // and per-prompt recall after it, so it repeats nothing the block gave.
      await blockFor(sid);
      const parts = (out && out.parts) || [];
      const text = parts
        .filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string")
        .map((p) => p.text).join("\n");
      if (!text.trim()) return;
      const messageID = (out && out.message && out.message.id) || inp.messageID;
      const answer = await ask("UserPromptSubmit",
        { session_id: sid, prompt: typed(text), turn_id: messageID });
      // A per-prompt block, when the hook prints one (JSON additionalContext or plain text).
      const extra = contextOf(answer);
      if (extra && messageID) promptBlocks.set(messageID, extra);
    },
    // The block rides the session's own model requests only: OpenCode runs this transform
    // before each step of a session, and not for its title or other side requests (which
    // `experimental.chat.system.transform` would also reach).
    "experimental.chat.messages.transform": async (inp, out) => {
      const messages = (out && out.messages) || [];
      const first = messages.find((m) => m && m.info && m.info.role === "user");
      if (!first || !Array.isArray(first.parts)) return;
      const sid = first.info.sessionID;
      const block = sid ? contextOf(await blockFor(sid)) : "";
      inject(first, block, "unshift");
      for (const m of messages) {
        const extra = m && m.info && m.info.role === "user" && promptBlocks.get(m.info.id);
        if (extra) inject(m, extra, "push");
      }
    },
    "tool.execute.before": async (inp, out) => {
      if (inp && inp.callID) toolArgs.set(inp.callID, out && out.args);
    },
    // Per-file recall (what the store knows about a file the tool read or edited) joins the
    // tool's output: OpenCode hands this object back as the result the model sees next.
    "tool.execute.after": async (inp, out) => {
      if (!inp) return;
      const toolInput = toolArgs.get(inp.callID) ?? inp.args;
      toolArgs.delete(inp.callID);
      const extra = contextOf(await ask("PostToolUse", {
        session_id: inp.sessionID, tool_name: inp.tool, tool_input: toolInput,
        tool_response: out && out.output, tool_use_id: inp.callID,
      }));
      if (extra && out && typeof out.output === "string") out.output = `${out.output}\n\n${extra}`;
    },
    event: async ({ event }) => {
      const props = (event && event.properties) || {};
      if (event.type === "message.updated" && props.info && props.info.id) {
        roles.set(props.info.id, props.info.role);
      } else if (event.type === "message.part.updated" && props.part) {
        const part = props.part;
        if (part.type === "text" && !part.synthetic && roles.get(part.messageID) === "assistant") {
          answers.set(part.sessionID, part.text);
        }
      } else if (event.type === "session.idle" && props.sessionID) {
        const answer = answers.get(props.sessionID) || "";
        answers.delete(props.sessionID);
        call("Stop", { session_id: props.sessionID, last_assistant_message: answer });
      }
    },
  };
};
