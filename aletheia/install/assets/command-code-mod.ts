// aletheia's mod for Command Code, written against command-code 1.64.0 (its mods API is marked
// experimental).  `aletheia install command-code` writes this file with the interpreter and
// the hook script filled in; `aletheia uninstall command-code` deletes it (edits here are lost).
//
// Command Code's shell hooks (settings.json) have no prompt event, its SessionStart hook does
// not fire in print mode (`cmd -p`), and a project's settings.json is read only in the
// directory `cmd` starts in; a mod sees every turn and tool in every mode, and a project's mods
// load from the repository root.  So this mod does it all: it stores each prompt (at the start
// of the turn that answers it), each tool call and the last answer, and adds the context block
// to the system prompt.  Everything goes through aletheia's stdlib hook (one capture path for
// every host), which always exits 0; nothing here throws into Command Code.
import { spawnSync } from "node:child_process";

const PYTHON: string = __PYTHON__;
const HOOK: string = __HOOK__;

// Command Code puts other SessionStart hooks' context in front of the first prompt.
const HOOK_CONTEXT = /^\s*(?:<hook_context\b[^>]*>[\s\S]*?<\/hook_context>\s*)+/;

function call(event: string, payload: Record<string, unknown>, cwd: string): string {
  try {
    const r = spawnSync(PYTHON, ["-I", "-S", HOOK, "command-code", event], {
      input: JSON.stringify({ hook_event_name: event, cwd, ...payload }),
      encoding: "utf8", timeout: 3000, stdio: ["pipe", "pipe", "ignore"], cwd,
    });
    return (r.stdout || "").trim();
  } catch {
    return "";
  }
}

// The hook answers in Command Code's JSON form (hookSpecificOutput.additionalContext).
function contextOf(answer: string): string {
  if (!answer.startsWith("{")) return answer;
  try {
    const parsed = JSON.parse(answer);
    const hso = parsed && parsed.hookSpecificOutput;
    return (hso && hso.additionalContext) || parsed.additionalContext || "";
  } catch {
    return "";
  }
}

function plain(content: any): string {
  return typeof content === "string" ? content
    : Array.isArray(content)
      ? content.filter((c: any) => c && c.type === "text" && typeof c.text === "string")
        .map((c: any) => c.text).join("\n")
      : "";
}

function textOf(message: any): string {
  return plain(message && message.content).replace(HOOK_CONTEXT, "");
}

export default function (cmd: any): void {
  const blocks = new Map<string, string>(); // sessionId -> context block (byte-stable per session)
  const promptBlocks = new Map<string, string>(); // messageId -> per-prompt block, if any
  const seen = new Set<string>(); // prompts already handed to the hook
  const where = (ctx: any): string => (ctx && ctx.cwd) || cmd.cwd || process.cwd();
  const blockFor = (sid: string, cwd: string): string => {
    if (!blocks.has(sid)) {
      blocks.set(sid, contextOf(call("SessionStart", { session_id: sid, source: "startup" }, cwd)));
    }
    return blocks.get(sid) || "";
  };

  cmd.hooks({
    onTurnStart: ({ state }: any, ctx?: any) => {
      try {
        const sid = state && state.sessionId;
        if (!sid) return state;
        const cwd = where(ctx);
        blockFor(sid, cwd); // read before this turn's prompt is stored: it never lists it
        for (const m of state.messages || []) {
          const meta = (m && m.meta) || {};
          if (m.role !== "user" || meta.source !== "user" || !meta.messageId) continue;
          if (seen.has(meta.messageId)) continue;
          seen.add(meta.messageId);
          const prompt = textOf(m);
          if (!prompt.trim()) continue;
          const answer = call("UserPromptSubmit",
            { session_id: sid, prompt, turn_id: meta.messageId }, cwd);
          const extra = contextOf(answer);
          if (extra) promptBlocks.set(meta.messageId, extra);
        }
      } catch {}
      return state;
    },
    appendSystemPrompt: ({ state }: any, ctx?: any) => {
      try {
        const sid = state && state.sessionId;
        return sid ? blockFor(sid, where(ctx)) || undefined : undefined;
      } catch {
        return undefined;
      }
    },
    // A per-prompt block (when the hook prints one) rides that prompt's requests only.
    transformContext: ({ messages }: any) => {
      if (!promptBlocks.size || !Array.isArray(messages)) return messages;
      let changed = false;
      const out = messages.map((m: any) => {
        const extra = m && m.meta && promptBlocks.get(m.meta.messageId);
        if (!extra || !Array.isArray(m.content)) return m;
        changed = true;
        return { ...m, content: [...m.content, { type: "text", text: extra }] };
      });
      return changed ? out : messages;
    },
    // Waited for, so that a per-file block the hook may print joins this tool's result.
    afterToolCall: ({ toolCallId, toolName, input, result, isError, state }: any, ctx?: any) => {
      try {
        const sid = state && state.sessionId;
        if (!sid) return undefined;
        const answer = call(isError ? "PostToolUseFailure" : "PostToolUse", {
          session_id: sid, tool_name: toolName, tool_input: input, tool_response: plain(result),
          tool_use_id: toolCallId,
        }, where(ctx));
        const extra = contextOf(answer);
        return extra ? { additionalContext: extra } : undefined;
      } catch {
        return undefined;
      }
    },
    onStop: ({ state, lastAssistantText }: any, ctx?: any) => {
      try {
        const sid = state && state.sessionId;
        if (sid) {
          call("Stop", { session_id: sid, last_assistant_message: lastAssistantText || "" },
            where(ctx));
        }
      } catch {}
      return undefined;
    },
  });
}
