// The question cards that pause a task until the person answers: the approval card
// (allow once, allow forever, deny, edit), the sudo password form, and an MCP server's
// question (a form to accept, decline or cancel).

import { diffView, splitDiff } from "./diff.js";
import { h, prettyJson } from "./dom.js";
import { commandLine } from "./tool-card.js";

let nextId = 0;
const uniqueId = (prefix) => `${prefix}-${++nextId}`;

/** A card waiting for the person; `settle` closes it with what happened. */
class QuestionCard {
  constructor(kind, title) {
    this.error = h("p", { class: "card-error", testid: `${kind}-error`, role: "alert", hidden: true });
    this.outcome = h("p", { class: "card-outcome", testid: `${kind}-outcome`, hidden: true });
    this.titleId = uniqueId(kind);
    this.el = h("section", {
      class: `question-card ${kind}-card`,
      testid: `${kind}-card`,
      dataset: { state: "open" },
      attrs: { "aria-labelledby": this.titleId },
    });
    this.heading = h("h3", { id: this.titleId, text: title });
  }

  get isOpen() {
    return this.el.dataset.state === "open";
  }

  setBusy(busy) {
    for (const control of this.el.querySelectorAll("button, input, textarea")) control.disabled = busy;
  }

  showError(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  settle(label) {
    if (!this.isOpen) return;
    this.el.dataset.state = "settled";
    this.setBusy(true);
    // Answered: only the question and its outcome stay, not controls that no longer work.
    for (const controls of this.el.querySelectorAll(".card-actions, .edit-field, form")) {
      controls.hidden = true;
    }
    this.outcome.textContent = label;
    this.outcome.hidden = false;
    // The title says what was decided: a card that still read "Approval needed" after
    // the answer looked as if it waited.
    this.heading.textContent = this.answeredTitle(label);
    this.showError("");
  }

  /** The title once answered: the outcome itself ("Denied", "Password sent"). */
  answeredTitle(label) {
    return label;
  }

  /** Run the answer; on failure the card opens again with the reason. */
  async answer(label, send) {
    this.setBusy(true);
    this.showError("");
    try {
      await send();
      this.settle(label);
    } catch (error) {
      if (error.name === "AbortError") return;
      this.setBusy(false);
      this.showError(error.message);
    }
  }
}

// The one-click decisions (edit needs a form): the decision types of the HITL shape, in
// the person's words. The approvals page shows the same ones.
export const DECISIONS = [
  { type: "approve", label: "Allow once", testid: "approve-once", outcome: "Allowed once" },
  { type: "allow_forever", label: "Allow forever", testid: "approve-forever", outcome: "Allowed forever" },
  { type: "reject", label: "Deny", testid: "deny", outcome: "Denied" },
];

/**
 * The approval card for an `approval_requested` event. `onDecide(decisions, interruptId)`
 * sends the answer and resolves once the continued stream has been opened.
 */
export class ApprovalCard extends QuestionCard {
  constructor(event, onDecide) {
    super("approval", "Approval needed");
    const request = event.request ?? {};
    this.actions = request.action_requests ?? [];
    this.interruptId = event.interrupt_id;
    this.onDecide = onDecide;
    const allowed = allowedDecisions(this.actions, request.review_configs ?? []);
    // A call that does not match the request (its description says so first): Deny is
    // the default, and allowing it takes a deliberate click.
    this.holdBack = this.actions.some((action) => action.default_decision === "reject");
    this.editors = this.actions.map((action) => actionEditor(action));
    this.buttons = h("div", { class: "card-actions" });
    for (const decision of DECISIONS) {
      this.buttons.append(this.button(decision, allowed, () => this.decide(decision)));
    }
    this.buttons.append(
      this.button({ type: "edit", label: "Edit", testid: "edit" }, allowed, () => this.toggleEdit(true)),
    );
    this.editButtons = h(
      "div",
      { class: "card-actions", hidden: true },
      h("button", { type: "button", class: "primary", testid: "edit-submit", text: "Run edited", on: { click: () => this.submitEdit() } }),
      h("button", { type: "button", testid: "edit-cancel", text: "Cancel edit", on: { click: () => this.toggleEdit(false) } }),
    );
    if (this.holdBack) {
      // Once shown, Enter denies: a hurried key press never approves what was not asked for.
      requestAnimationFrame(() => this.buttons.querySelector('[data-testid="deny"]')?.focus());
    }
    this.el.append(
      this.heading,
      ...this.actions.map((action, index) => actionView(action, this.editors[index])),
      this.buttons,
      this.editButtons,
      this.error,
      this.outcome,
    );
  }

  button(decision, allowed, onClick) {
    const primary = this.holdBack ? "reject" : "approve";
    const kind = [decision.type === "reject" ? "danger" : "", decision.type === primary ? "primary" : ""]
      .filter(Boolean).join(" ");
    return h("button", {
      type: "button",
      class: kind,
      testid: decision.testid,
      text: decision.label,
      // A decision the question does not accept is shown but cannot be chosen.
      disabled: !allowed.has(decision.type),
      dataset: { allowed: String(allowed.has(decision.type)) },
      on: { click: onClick },
    });
  }

  setBusy(busy) {
    super.setBusy(busy);
    if (!busy) {
      for (const button of this.buttons.querySelectorAll("button")) {
        button.disabled = button.dataset.allowed !== "true";
      }
    }
  }

  answeredTitle(label) {
    // "Answered" and "Closed" come from the task (a replay, its end), not a decision here.
    return label === "Answered" || label === "Closed" ? `Approval ${label.toLowerCase()}` : label;
  }

  decide(decision) {
    // One decision per action request, in order; the card answers them all alike.
    const decisions = this.actions.map(() => ({ type: decision.type }));
    return this.answer(decision.outcome, () => this.onDecide(decisions, this.interruptId));
  }

  toggleEdit(editing) {
    for (const editor of this.editors) editor.wrapper.hidden = !editing;
    this.buttons.hidden = editing;
    this.editButtons.hidden = !editing;
    this.showError("");
    if (editing) this.editors[0]?.input.focus();
  }

  submitEdit() {
    const decisions = [];
    for (const [index, action] of this.actions.entries()) {
      const args = this.editors[index].read();
      if (args instanceof Error) {
        this.showError(args.message);
        return undefined;
      }
      decisions.push({ type: "edit", edited_action: { name: action.name, args } });
    }
    return this.answer("Edited and allowed", () => this.onDecide(decisions, this.interruptId));
  }
}

function allowedDecisions(actions, configs) {
  const all = ["approve", "allow_forever", "reject", "edit"];
  // A decision is offered when every action of the question accepts it.
  return new Set(all.filter((type) => actions.every((action) => {
    const config = configs.find((c) => c.action_name === action.name);
    return !config?.allowed_decisions || config.allowed_decisions.includes(type);
  })));
}

function actionView(action, editor) {
  // A coder write asks with the change as a diff after its one-line reason.
  const { before, diff } = splitDiff(action.description ?? "");
  return h(
    "div",
    { class: "approval-action", testid: "approval-action" },
    before ? h("p", { class: "action-description", testid: "action-description", text: before.replace(/:$/, "") }) : null,
    commandLine(action.name, action.args),
    diff ? diffView(diff) : null,
    editor.wrapper,
  );
}

/** The edit field of one action: the command of a shell call, the JSON args otherwise. */
function actionEditor(action) {
  const id = uniqueId("edit");
  const isShell = action.name === "shell_exec" && typeof action.args?.command === "string";
  const input = h("textarea", {
    id,
    class: "edit-input",
    testid: "edit-input",
    rows: isShell ? 2 : 6,
    spellcheck: false,
    value: isShell ? action.args.command : prettyJson(action.args ?? {}),
  });
  const wrapper = h(
    "div",
    { class: "edit-field", hidden: true },
    h("label", { htmlFor: id, text: isShell ? "Command" : `Arguments of ${action.name} (JSON)` }),
    input,
  );
  const read = () => {
    if (isShell) {
      const command = input.value.trim();
      return command ? { ...action.args, command } : new Error("The command cannot be empty.");
    }
    try {
      const args = JSON.parse(input.value);
      if (args && typeof args === "object" && !Array.isArray(args)) return args;
    } catch {
      // Reported below, with the same words as a non-object.
    }
    return new Error(`The arguments of ${action.name} must be a JSON object.`);
  };
  return { wrapper, input, read };
}

/**
 * The sudo password form for a `password_requested` event. `onAnswer(body)` sends
 * `{password}` or `{cancel: true}`. The password lives only in the input, cleared at once.
 */
export class PasswordCard extends QuestionCard {
  constructor(event, onAnswer) {
    super("password", "Password needed");
    const request = event.request ?? {};
    const id = uniqueId("password-input");
    this.input = h("input", {
      id,
      type: "password",
      class: "password-input",
      testid: "password-input",
      autocomplete: "off",
      required: true,
    });
    const form = h(
      "form",
      { class: "password-form", on: { submit: (e) => this.submit(e, onAnswer) } },
      h("label", { htmlFor: id, text: request.prompt || "Password for sudo" }),
      this.input,
      h(
        "div",
        { class: "card-actions" },
        h("button", { type: "submit", class: "primary", testid: "password-submit", text: "Send" }),
        h("button", {
          type: "button",
          testid: "password-cancel",
          text: "Cancel",
          on: { click: () => this.answer("Cancelled", () => onAnswer({ cancel: true })) },
        }),
      ),
    );
    this.el.append(
      this.heading,
      request.command ? commandLine("shell_exec", { command: request.command }) : null,
      form,
      this.error,
      this.outcome,
    );
    // An earlier try was wrong: the server says why, shown until the next answer.
    if (request.error) this.showError(request.error);
  }

  submit(event, onAnswer) {
    event.preventDefault();
    const password = this.input.value;
    this.input.value = "";
    return this.answer("Password sent", () => onAnswer({ password }));
  }
}

// An MCP server's question during a tool call: an elicitation form (its fields from the
// request's flat schema), a link to open (URL mode), or a sampling request (may DuckLM's
// model answer the server?).
const SERVER_ACTIONS = [
  { action: "accept", label: "Accept", testid: "elicit-accept", outcome: "Accepted", kind: "primary" },
  { action: "decline", label: "Decline", testid: "elicit-decline", outcome: "Declined", kind: "danger" },
  { action: "cancel", label: "Cancel", testid: "elicit-cancel", outcome: "Cancelled", kind: "" },
];

/**
 * The card for an `elicitation_requested` event. `onAnswer(body)` sends
 * `{action, content?, interrupt_id}`; the server checks the content against the form.
 */
export class ElicitationCard extends QuestionCard {
  constructor(event, onAnswer) {
    const request = event.request ?? {};
    const sampling = request.type === "sampling";
    const link = !sampling && request.mode === "url";
    super("elicitation", sampling ? "May DuckLM's model answer?" : link ? "A server asks you to open a link" : "A server asks you");
    this.interruptId = event.interrupt_id;
    const schema = request.requested_schema ?? {};
    this.fields = sampling ? [] : Object.entries(schema.properties ?? {}).map(
      ([name, field]) => formField(name, field, (schema.required ?? []).includes(name)),
    );
    const buttons = h("div", { class: "card-actions" });
    for (const choice of SERVER_ACTIONS) {
      buttons.append(h("button", {
        type: "button",
        class: choice.kind,
        testid: choice.testid,
        text: choice.label,
        on: { click: () => this.send(choice, onAnswer) },
      }));
    }
    this.el.append(
      this.heading,
      h("p", { class: "elicit-origin", testid: "elicit-origin", text: `${request.server ?? ""} › ${request.tool ?? ""}` }),
      h("p", { class: "elicit-message", testid: "elicit-message", text: request.message ?? "" }),
      ...(request.messages ?? []).map((m) => h("pre", { class: "elicit-sample", text: `${m.role}: ${m.text}` })),
      // Spread, not null: the DOM's own append would write a null as the text "null".
      ...(link ? [linkView(request)] : []),
      h("form", { class: "elicit-form", on: { submit: (e) => e.preventDefault() } }, ...this.fields.map((f) => f.wrapper)),
      request.note ? h("p", { class: "elicit-note", text: request.note }) : null,
      buttons,
      this.error,
      this.outcome,
    );
    if (request.error) this.showError(request.error);
  }

  send(choice, onAnswer) {
    const body = { action: choice.action, interrupt_id: this.interruptId };
    if (choice.action === "accept" && this.fields.length) {
      const content = {};
      for (const field of this.fields) {
        const value = field.read();
        if (value instanceof Error) return this.showError(value.message);
        if (value !== undefined) content[field.name] = value;
      }
      body.content = content;
    }
    return this.answer(choice.outcome, () => onAnswer(body));
  }
}

/**
 * A URL-mode elicitation's link, shown whole and opened only by the person's click: in a
 * new tab that cannot reach this page (`noopener`) nor learn where it came from
 * (`noreferrer`). Only an http(s) link is a link; anything else (the runtime refuses it
 * first) stays text.
 */
function linkView(request) {
  const url = request.url ?? "";
  let host = "";
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "https:" || parsed.protocol === "http:") host = parsed.host;
  } catch {
    // Not a URL: shown as text below.
  }
  const shown = host
    ? h("a", { href: url, text: url, testid: "elicit-link", attrs: { target: "_blank", rel: "noopener noreferrer" } })
    : h("code", { text: url, testid: "elicit-link" });
  const server = request.server || "The server";
  const words = host
    ? `${server} asks you to open a page on ${host}. DuckLM does not open it: check where it leads, open it yourself if you agree, then Accept when done (or Decline).`
    : `${server} asks you to open this, which is not a web link.`;
  return h("div", { class: "elicit-url", testid: "elicit-url" },
    h("p", { class: "elicit-url-words", testid: "elicit-url-words", text: words }),
    h("p", {}, shown));
}

// A string field's format as the input type that helps the person type it (checked again
// by the server; an unknown format is plain text).
const FORMAT_INPUTS = { email: "email", uri: "url", date: "date" };

/**
 * One field of an elicitation form: string, number, integer, boolean, enum, or a
 * multi-select (an array of enum items, a `<select multiple>`).
 */
function formField(name, field, required) {
  const id = uniqueId("elicit-field");
  const multiple = field.type === "array";
  const choices = multiple ? field.items ?? {} : field;
  const options = choices.enum ?? (choices.oneOf ?? choices.anyOf ?? []).map((o) => o.const);
  const titles = choices.enumNames ?? (choices.oneOf ?? choices.anyOf ?? []).map((o) => o.title ?? o.const);
  let input;
  if (options.length) {
    const defaults = [field.default ?? []].flat();
    input = h("select", { id, testid: `elicit-input-${name}`, multiple },
      ...options.map((value, i) => h("option", { value, text: titles[i] ?? value, selected: defaults.includes(value) })));
    if (!multiple && field.default !== undefined) input.value = field.default;
  } else if (field.type === "boolean") {
    input = h("input", { id, type: "checkbox", testid: `elicit-input-${name}` });
    input.checked = field.default === true;
  } else {
    const numeric = field.type === "number" || field.type === "integer";
    const type = numeric ? "number" : FORMAT_INPUTS[field.format] ?? "text";
    input = h("input", { id, type, testid: `elicit-input-${name}` });
    if (field.type === "integer") input.step = "1";
    if (field.default !== undefined) input.value = String(field.default);
  }
  const label = `${field.title ?? name}${required ? " *" : ""}`;
  const wrapper = h("div", { class: "elicit-field" },
    h("label", { htmlFor: id, text: label }),
    input,
    field.description ? h("small", { text: field.description }) : null);
  const read = () => {
    if (field.type === "boolean" && !options.length) return input.checked;
    if (multiple && options.length) {
      const picked = Array.from(input.selectedOptions, (option) => option.value);
      if (!picked.length && required) return new Error(`${label.replace(" *", "")} is required.`);
      return picked.length ? picked : undefined;
    }
    const text = input.value.trim();
    if (!text) return required ? new Error(`${label.replace(" *", "")} is required.`) : undefined;
    if (field.type === "integer" || field.type === "number") {
      const number = Number(text);
      if (Number.isNaN(number) || (field.type === "integer" && !Number.isInteger(number))) {
        return new Error(`${name} must be ${field.type === "integer" ? "a whole number" : "a number"}.`);
      }
      return number;
    }
    return text;
  };
  return { name, wrapper, read };
}
