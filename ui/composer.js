// The message box: Enter sends, Shift+Enter starts a new line; a stop button while a
// task runs; the critic and memory switches, remembered in this browser.

const OPTIONS_KEY = "ducklm.options";
const MAX_ROWS_PX = 240;
// Below this width (the phone layout of style.css) the keys' hint in the placeholder
// would be cut, and a phone's keyboard has no Shift+Enter anyway: the short one fits.
const NARROW_SCREEN = "(max-width: 760px)";
const SHORT_PLACEHOLDER = "Message DuckLM";

const HINTS = {
  idle: "",
  running: "DuckLM is working. Stop it to send something else.",
  interrupted: "Answer the question above, or stop the task.",
  resumable: "DuckLM restarted during this task: choose Go on above to finish it, or Stop.",
};

export class Composer {
  /**
   * @param {{form: HTMLFormElement, input: HTMLTextAreaElement, send: HTMLButtonElement,
   *   stop: HTMLButtonElement, hint: HTMLElement, critic: HTMLInputElement,
   *   memory: HTMLInputElement}} elements
   * @param {{onSend: (text: string) => void, onStop: () => void}} handlers
   */
  constructor(elements, { onSend, onStop }) {
    Object.assign(this, elements);
    this.onSend = onSend;
    this.state = "idle";
    this.loadOptions();
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener("keydown", (event) => {
      // isComposing: Enter that confirms an IME composition must not send.
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.input.addEventListener("input", () => this.autosize());
    this.fitPlaceholder(window.matchMedia(NARROW_SCREEN));
    this.stop.addEventListener("click", () => onStop());
    for (const box of [this.critic, this.memory]) {
      box.addEventListener("change", () => this.saveOptions());
    }
  }

  /** The page's placeholder on a wide screen, the short one on a narrow one, kept on resize. */
  fitPlaceholder(narrow) {
    const wide = this.input.placeholder;
    const fit = () => {
      this.input.placeholder = narrow.matches ? SHORT_PLACEHOLDER : wide;
    };
    narrow.addEventListener("change", fit);
    fit();
  }

  submit() {
    const text = this.input.value.trim();
    if (!text || this.state !== "idle") return;
    this.input.value = "";
    this.autosize();
    this.onSend(text);
  }

  /**
   * "idle", "running", "interrupted" (waiting for an answer to a question) or
   * "resumable" (stopped by a restart, waiting for Go on or Stop).
   */
  setState(state) {
    this.state = state;
    this.send.disabled = state !== "idle";
    this.stop.hidden = state === "idle";
    this.hint.textContent = HINTS[state] ?? "";
  }

  focus() {
    this.input.focus();
  }

  /** Put back a message the server refused, unless the person already typed another. */
  restore(text) {
    if (!this.input.value) this.input.value = text;
    this.autosize();
    this.focus();
  }

  // The box grows with its text up to a limit, then scrolls.
  autosize() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, MAX_ROWS_PX)}px`;
  }

  /** The run switches sent with each message and answer. */
  get options() {
    return { critic: this.critic.checked, memory: this.memory.checked };
  }

  loadOptions() {
    let saved = {};
    try {
      saved = JSON.parse(localStorage.getItem(OPTIONS_KEY) ?? "{}") ?? {};
    } catch {
      // Unreadable or disabled storage: the defaults (both on, as the server's) apply.
    }
    this.critic.checked = saved.critic !== false;
    this.memory.checked = saved.memory !== false;
  }

  saveOptions() {
    try {
      localStorage.setItem(OPTIONS_KEY, JSON.stringify(this.options));
    } catch {
      // Without storage the switches last until the page reloads.
    }
  }
}
