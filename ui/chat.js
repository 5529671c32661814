// The conversation view: loads a conversation's history, sends messages, follows the
// task's event stream, answers its questions and stops it.
//
// A run belongs to the server, not to this page (docs/api.md, "Disconnects"): leaving a
// conversation only closes the stream, and opening it again attaches to its active task,
// whose stream replays what happened so far and then follows it live.

import * as api from "./api.js";
import { BranchControls } from "./branches.js";
import { transcriptView } from "./history.js";
import { reportErrors, showError, showInfo } from "./notify.js";
import { RestartCard } from "./restart-card.js";
import { REVERT_EVENT, markReverted } from "./revert.js";
import { Turn, userMessage } from "./turn.js";
import { showSent } from "./mcp-complete.js";

const REATTACH_LIMIT = 3;
const REATTACH_DELAY_MS = 1000;
const STICK_TO_BOTTOM_PX = 80;

export class Chat {
  /**
   * @param {{transcript: HTMLElement, empty: HTMLElement}} elements - The scrolling
   *   transcript (role="log") and the greeting shown before the first message.
   * @param {{composer: import("./composer.js").Composer,
   *   activity: import("./activity.js").Activity,
   *   onCreated: (id: string) => void, onChanged: () => void,
   *   onIdle: (id: string|null) => void,
   *   prepare?: (id: string) => Promise<void>}} parts - `onCreated` when sending creates a
   *   conversation; `onChanged` when titles or order may have changed; `onIdle` when a
   *   conversation is shown or its task ended (a review may run behind the answer);
   *   `prepare`, awaited before a new conversation's first message is sent (its model).
   */
  constructor({ transcript, empty }, { composer, activity, onCreated, onChanged, onIdle, prepare }) {
    Object.assign(this, { transcript, empty, composer, activity, onCreated, onChanged, onIdle, prepare });
    this.conversationId = null;
    this.generation = 0; // bumped on each switch; late answers of an older view are dropped
    this.stream = null;
    this.turn = null;
    this.taskId = null;
    this.reattempts = 0;
    this.stickToBottom = true;
    this.branches = new BranchControls(this);
    this.pendingBubble = null; // the message just sent, until its task id is known
    transcript.addEventListener(REVERT_EVENT, (event) => this.revert(event.detail));
    transcript.addEventListener("scroll", () => {
      const gap = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight;
      this.stickToBottom = gap < STICK_TO_BOTTOM_PX;
    });
    // Follow the answer as it grows, unless the person scrolled up to read.
    new MutationObserver(() => {
      if (this.stickToBottom) transcript.scrollTop = transcript.scrollHeight;
    }).observe(transcript, { childList: true, subtree: true, characterData: true });
  }

  /** Show conversation `id` (null: a new, empty one). */
  async open(id) {
    const generation = this.leave();
    this.conversationId = id;
    this.empty.hidden = Boolean(id);
    this.setTaskState("idle");
    this.onIdle(id);
    if (!id) return;
    const path = `/v1/conversations/${encodeURIComponent(id)}`;
    let conversation, transcript;
    try {
      [conversation, transcript] = await Promise.all([api.get(path), api.get(`${path}/transcript`)]);
    } catch (error) {
      if (generation === this.generation) showError(error);
      return;
    }
    if (generation !== this.generation) return;
    const task = conversation.active_task;
    this.transcript.append(...transcriptView(transcript.exchanges, task));
    if (task) this.attach(task);
    else this.showLatestEvents(transcript.exchanges);
    this.showReverted(path, generation);
    if (!task) await this.branches.refresh(generation);
  }

  /** Mark the revert buttons whose changes an undo reverted (before this page, too). */
  async showReverted(path, generation) {
    let changes;
    try {
      ({ changes } = await api.get(`${path}/changes`));
    } catch {
      return; // undo off, or the server is gone: the buttons stay as they are
    }
    if (generation !== this.generation) return;
    markReverted(this.transcript, new Set(changes.filter((c) => c.reverted_by).map((c) => c.id)));
  }

  /** Whether a task's stream is open (the view is live). */
  get following() {
    return this.stream !== null;
  }

  /** Stop following the current view; returns the new view's generation. */
  leave() {
    this.stream?.abort();
    this.stream = null;
    this.transcript.replaceChildren();
    this.turn = null;
    this.taskId = null;
    this.reattempts = 0;
    this.stickToBottom = true;
    this.activity.reset(null);
    this.generation += 1;
    return this.generation;
  }

  startTurn(taskId) {
    this.turn = new Turn({
      onDecide: (decisions, interruptId) => this.decide(decisions, interruptId),
      onPassword: (body) => this.answerPassword(body),
      onElicit: (body) => this.resume("elicitation", body),
    });
    this.turn.setState("running");
    this.transcript.append(this.turn.el);
    this.taskId = taskId;
    this.activity.reset(taskId);
  }

  /** Send a message as a new task (creating the conversation first when it is new). */
  async send(text) {
    const generation = this.generation;
    if (!this.conversationId) {
      let created;
      try {
        created = await api.post("/v1/conversations", {});
      } catch (error) {
        showError(error);
        this.composer.restore(text);
        return;
      }
      if (generation !== this.generation) return;
      this.conversationId = created.id;
      this.onCreated(created.id);
      await this.prepare?.(created.id);
    }
    this.empty.hidden = true;
    const bubble = userMessage(text);
    this.transcript.append(bubble);
    this.pendingBubble = bubble;
    this.stickToBottom = true;
    this.startTurn(null);
    const body = { message: text, conversation_id: this.conversationId, ...this.composer.options };
    try {
      await this.follow("POST", "/v1/chat/stream", body);
    } catch (error) {
      // Refused before it started (e.g. 409, a task is already running): undo the send.
      showError(error);
      bubble.remove();
      this.turn.el.remove();
      this.composer.restore(text);
    }
  }

  /** Re-show the active task from its start: its stream replays everything so far. */
  attach(task) {
    const bubble = userMessage(task.message ?? "");
    bubble.dataset.taskId = task.task_id;
    this.transcript.append(bubble);
    this.startTurn(task.task_id);
    this.follow("GET", `/v1/tasks/${encodeURIComponent(task.task_id)}/stream`).catch(showError);
  }

  /** Answer the open approval; resolves when the server accepted it, rejects if refused. */
  decide(decisions, interruptId) {
    const body = { decisions, interrupt_id: interruptId, ...this.composer.options };
    return this.resume("continue", body);
  }

  /** Send the sudo password (or `{cancel: true}`); resolves/rejects as `decide`. */
  answerPassword(body) {
    return this.resume("password", body);
  }

  resume(kind, body) {
    const path = `/v1/tasks/${encodeURIComponent(this.taskId)}/${kind}/stream`;
    return new Promise((resolve, reject) => {
      this.follow("POST", path, body, resolve).catch(reject);
    });
  }

  /**
   * Follow one SSE stream of the current task into the current turn.
   *
   * Rejects only when the server refuses the request (nothing started); a stream that
   * breaks later is reported and reconciled with the task's stored state.
   */
  async follow(method, path, body, onOpen) {
    this.stream?.abort();
    const controller = new AbortController();
    this.stream = controller;
    const generation = this.generation;
    const before = this.taskState;
    let opened = false;
    this.setTaskState("running");
    try {
      await api.stream(method, path, body, {
        signal: controller.signal,
        onOpen: () => {
          opened = true;
          onOpen?.();
        },
        onEvent: (event) => {
          if (generation === this.generation) this.handle(event);
        },
      });
    } catch (error) {
      if (error.name === "AbortError" || generation !== this.generation) return;
      if (!opened) {
        this.setTaskState(before);
        throw error;
      }
      showError(error);
    } finally {
      if (this.stream === controller) this.stream = null;
    }
    if (generation === this.generation) await this.reconcile(generation);
  }

  handle(event) {
    if (event.task_id) this.taskId = event.task_id;
    if (event.task_id && this.pendingBubble) {
      this.pendingBubble.dataset.taskId = event.task_id; // for its Edit and Regenerate
      this.pendingBubble = null;
    }
    this.turn.apply(event);
    this.activity.record(event);
    if (event.type === "message_sent") showSent(this.transcript, event);
    if (event.type === "run_started") {
      this.setTaskState("running");
      this.onChanged(); // a first message titles the conversation
    } else if (event.type === "done") {
      this.setTaskState(event.status === "interrupted" ? "interrupted" : "idle");
      if (event.status !== "interrupted") this.onChanged();
      if (event.status !== "interrupted") this.branches.refresh(this.generation);
      this.onIdle(this.conversationId);
    }
  }

  /**
   * After a stream ends: when it stopped short of what the task did (no `done`, or a
   * pause without its question), ask the server where the task stands.
   */
  async reconcile(generation) {
    const turn = this.turn;
    const settled = turn.state !== "running" && (turn.state !== "interrupted" || turn.openQuestion);
    if (settled || !this.taskId) {
      if (turn.state === "running") this.setTaskState("idle");
      return;
    }
    let task;
    try {
      task = await api.get(`/v1/tasks/${encodeURIComponent(this.taskId)}`);
    } catch (error) {
      showError(error);
      return;
    }
    if (generation !== this.generation || turn !== this.turn) return;
    if (task.status === "running") {
      this.reattach(task, generation);
    } else if (task.status === "interrupted") {
      this.showWaiting(task);
    } else {
      if (task.error && turn.state === "running") turn.apply({ type: "error", message: task.error });
      turn.apply({ type: "done", status: task.status, answer: task.answer });
      this.setTaskState("idle");
    }
  }

  /**
   * The current task waits: at its question, or, with none (its process died mid-run,
   * docs/api.md), for the person to go on or stop it.
   */
  showWaiting(task) {
    const turn = this.turn;
    const question = (task.pending ?? []).at(-1);
    if (question && !turn.openQuestion) turn.apply(question);
    else if (!question && !turn.openQuestion) turn.ask(this.restartCard(task));
    turn.setState("interrupted");
    this.setTaskState(question ? "interrupted" : "resumable");
  }

  restartCard(task) {
    return new RestartCard(task, {
      onGoOn: () => this.resume("resume"),
      onStop: async () => {
        await this.cancel();
        this.composer.focus(); // the card that had the focus is gone
      },
    });
  }

  /** The connection dropped while the task runs: replay it into a fresh turn. */
  reattach(task, generation) {
    if (this.reattempts >= REATTACH_LIMIT) {
      showError("Lost the connection to this task. Reload the page to see how it ends.");
      this.setTaskState("idle");
      return;
    }
    this.reattempts += 1;
    setTimeout(() => {
      if (generation !== this.generation) return;
      this.turn.el.remove();
      this.startTurn(task.task_id);
      this.follow("GET", `/v1/tasks/${encodeURIComponent(task.task_id)}/stream`).catch(showError);
    }, REATTACH_DELAY_MS);
  }

  /** The composer's Stop: `cancel`, with a refusal shown as a notice. */
  stop() {
    if (!this.taskId) {
      showInfo("The task is starting; try again in a moment.");
      return undefined;
    }
    return reportErrors(() => this.cancel());
  }

  /** Stop the running task, or abandon the one waiting; rejects when the server refuses. */
  async cancel() {
    const waiting = this.taskState === "interrupted" || this.taskState === "resumable";
    await api.post(`/v1/tasks/${encodeURIComponent(this.taskId)}/cancel`);
    // A running task's stream ends with `done` (cancelled); a waiting one has no run
    // to say so, so the page closes it itself.
    if (waiting) {
      this.stream?.abort();
      this.turn.closeQuestions("Cancelled");
      this.turn.setState("cancelled");
      this.setTaskState("idle");
    }
  }

  /** With no task active, the activity drawer shows the latest task's audited events. */
  showLatestEvents(exchanges) {
    const latest = exchanges.findLast((exchange) => exchange.task_id);
    if (!latest) return;
    this.activity.reset(latest.task_id);
    for (const event of latest.events) this.activity.record(event);
  }

  /** Roll back the changes of `callId` (or of its turn); tell the button how it went. */
  async revert({ callId, scope, force, settle }) {
    try {
      const path = `/v1/conversations/${encodeURIComponent(this.conversationId)}/undo`;
      const which = scope === "turn" ? { turn_of: callId } : { to_call: callId };
      const result = await api.post(path, { ...which, force });
      const files = result.files.filter((file) => file.action !== "unchanged");
      showInfo(`Reverted ${files.length} file(s): ${files.map((file) => file.path).join(", ")}`);
      settle("done");
      markReverted(this.transcript, new Set(result.changes.map((change) => change.id)));
    } catch (error) {
      showError(error);
      const refused = /outside DuckLM|changed again later/.test(error.message);
      settle(error.status === 409 && refused ? "refused" : "failed");
    }
  }

  setTaskState(state) {
    this.taskState = state;
    this.composer.setState(state);
  }
}
