// The web chat's entry point: finds the page's parts, wires the modules together and
// switches views by the URL's hash (#/ new chat, #/c/<id> a conversation, #/approvals,
// #/skills, #/memory, #/experience), so reload and the back button keep the place.

import { Activity } from "./activity.js";
import * as api from "./api.js";
import { showMcpServers } from "./mcp-servers.js";
import { Chat } from "./chat.js";
import { Composer } from "./composer.js";
import { McpCompletion } from "./mcp-complete.js";
import { ExportMenu } from "./export-menu.js";
import { ImportButton } from "./import-button.js";
import { initLogout } from "./logout.js";
import { ModelPicker } from "./model-picker.js";
import { initNotices } from "./notify.js";
import { ApprovalsPage } from "./page-approvals.js";
import { ExperiencePage, MemoryPage, SkillsPage } from "./page-learning.js";
import { ConversationSearch, SaidSearch } from "./search.js";
import { Sidebar } from "./sidebar.js";
import { StatusLine } from "./status-line.js";
import { initTheme } from "./theme.js";
import { withToolProgress } from "./tool-card.js";
import { Uploads } from "./upload.js";

const PAGE_TITLES = {
  approvals: "Approvals",
  skills: "Skills",
  memory: "Memory",
  experience: "Experience",
};
const NEW_TITLE = "New conversation";

const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

function buildParts() {
  initNotices(byTestId("toasts"));
  initTheme(byTestId("theme-toggle"));
  initLogout(byTestId("logout-button"));
  // A call's live progress goes to its tool card, not to the events list.
  const activity = withToolProgress(new Activity({
    events: byTestId("activity-events"),
    commands: byTestId("activity-commands"),
    memory: byTestId("activity-memory"),
    tabs: [...document.querySelectorAll('[role="tab"]')],
    caption: byTestId("activity-caption"),
  }), byTestId("transcript"));
  const composerElements = {
    form: byTestId("composer"),
    input: byTestId("composer-input"),
    send: byTestId("send-button"),
    stop: byTestId("stop-button"),
    hint: byTestId("composer-hint"),
    critic: byTestId("option-critic"),
    memory: byTestId("option-memory"),
  };
  const pages = {
    approvals: new ApprovalsPage({ pending: byTestId("pending-list"), rules: byTestId("rules-list") }),
    skills: new SkillsPage({ list: byTestId("skills-list"), problems: byTestId("skill-problems") }),
    memory: bothPages(
      new MemoryPage({
        form: byTestId("memory-search"),
        query: byTestId("memory-query"),
        list: byTestId("memory-list"),
        status: byTestId("memory-status"),
      }),
      new SaidSearch({
        form: byTestId("memory-search"),
        query: byTestId("memory-query"),
        list: byTestId("said-list"),
        status: byTestId("said-status"),
        transcript: byTestId("transcript"),
      }),
    ),
    experience: new ExperiencePage({ list: byTestId("experience-list") }),
  };
  return { activity, composerElements, pages };
}

/** One page made of two that show together (the Memory page: facts, and what was said). */
function bothPages(...parts) {
  return { show: () => parts.forEach((part) => part.show()) };
}

/** Off-canvas panels (the sidebar at phone width, the activity drawer) and their buttons. */
function panelToggle(panel, button, { onOpen } = {}) {
  const set = (open) => {
    panel.classList.toggle("open", open);
    button.setAttribute("aria-expanded", String(open));
    onOpen?.(open);
  };
  button.addEventListener("click", () => set(!panel.classList.contains("open")));
  return set;
}

function main() {
  const { activity, composerElements, pages } = buildParts();
  const title = byTestId("view-title");
  const sidebarPanel = byTestId("sidebar");
  const backdrop = byTestId("backdrop");
  const setSidebar = panelToggle(sidebarPanel, byTestId("menu-button"), {
    onOpen: (open) => (backdrop.hidden = !open),
  });
  const drawer = byTestId("activity-drawer");
  const setDrawer = panelToggle(drawer, byTestId("activity-toggle"), {
    onOpen: (open) => {
      drawer.hidden = !open;
      if (open) showMcpServers(byTestId("activity-mcp"));
    },
  });
  byTestId("activity-close").addEventListener("click", () => setDrawer(false));
  byTestId("sidebar-close").addEventListener("click", () => setSidebar(false));
  backdrop.addEventListener("click", () => setSidebar(false));

  const syncTitle = () => {
    if (currentView() === "chat") title.textContent = sidebar.titleOf(chat.conversationId) ?? NEW_TITLE;
  };
  const exportMenu = new ExportMenu({
    menu: byTestId("export-menu"),
    markdown: byTestId("export-md"),
    jsonl: byTestId("export-jsonl"),
    allMarkdown: byTestId("export-all-md"),
    allJsonl: byTestId("export-all-jsonl"),
  });
  new ImportButton({ button: byTestId("import-button"), input: byTestId("import-input") }, (id) => {
    sidebar.refresh();
    location.hash = `#/c/${encodeURIComponent(id)}`;
  });
  const sidebar = new Sidebar(byTestId("conversation-list"), {
    onDeleted: (id) => {
      if (chat.conversationId === id) location.hash = "#/";
    },
    onRefreshed: () => syncTitle(),
  });
  const status = new StatusLine({
    warmup: byTestId("warmup-status"),
    review: byTestId("review-status"),
    reviewText: byTestId("review-status-text"),
    skip: byTestId("review-skip"),
  });
  status.watchWarmup();
  const models = new ModelPicker({ health: byTestId("model-health"), select: byTestId("model-picker") });
  models.watch();
  let chat = null;
  new McpCompletion(composerElements.input); // before the composer: it takes Enter first when open
  const composer = new Composer(composerElements, {
    onSend: (text) => chat.send(text),
    onStop: () => chat.stop(),
  });
  chat = new Chat(
    { transcript: byTestId("transcript"), empty: byTestId("empty-state") },
    {
      composer,
      activity,
      onCreated: (id) => {
        location.hash = `#/c/${encodeURIComponent(id)}`;
      },
      prepare: (id) => models.prepare(id),
      onChanged: () => sidebar.refresh(),
      onIdle: (id) => status.watchReview(id),
    },
  );

  new ConversationSearch({
    form: byTestId("conversation-search"),
    input: byTestId("conversation-search-input"),
    results: byTestId("search-results"),
    transcript: byTestId("transcript"),
  });
  const uploads = new Uploads(
    {
      button: byTestId("upload-button"),
      input: byTestId("upload-input"),
      dropZone: byTestId("chat-view"),
      list: byTestId("upload-list"),
    },
    {
      // A new chat gets its conversation now, as its first message would make it.
      ensureConversation: async () => {
        if (chat.conversationId) return chat.conversationId;
        const created = await api.post("/v1/conversations", {});
        location.hash = `#/c/${encodeURIComponent(created.id)}`;
        await models.prepare(created.id);
        return created.id;
      },
      onUndone: () => sidebar.refresh(),
    },
  );

  byTestId("new-conversation").addEventListener("click", () => {
    if (location.hash === "#/" && currentView() === "chat") chat.open(null).then(syncTitle);
    location.hash = "#/";
    composer.focus();
  });
  for (const refresh of document.querySelectorAll("[data-refresh]")) {
    refresh.addEventListener("click", () => route());
  }

  let opened = false; // whether route() has opened a conversation view yet

  function currentView() {
    return document.querySelector(".view:not([hidden])")?.dataset.view;
  }

  function showView(name) {
    for (const view of document.querySelectorAll(".view")) view.hidden = view.dataset.view !== name;
    for (const link of document.querySelectorAll(".pages-nav a")) {
      if (link.dataset.route === name) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    setSidebar(false); // at phone width, choosing a place closes the menu
  }

  function route() {
    const [name = "", ...rest] = location.hash.replace(/^#\/?/, "").split("/");
    if (PAGE_TITLES[name]) {
      exportMenu.show(null);
      models.select.hidden = true; // a page has no conversation to choose for
      showView(name);
      title.textContent = PAGE_TITLES[name];
      pages[name].show();
      return;
    }
    const id = name === "c" && rest.length ? decodeURIComponent(rest.join("/")) : null;
    showView("chat");
    exportMenu.show(id);
    models.select.hidden = false;
    models.show(id);
    sidebar.setActive(id);
    // Coming back from a page to the same conversation keeps its live stream; without
    // one, reload it: its task may have been answered from the approvals page meanwhile.
    if (id !== chat.conversationId || !opened || (id && !chat.following)) {
      if (id !== chat.conversationId) uploads.reset();
      opened = true;
      chat.open(id);
    }
    syncTitle();
  }

  window.addEventListener("hashchange", route);
  sidebar.refresh();
  route();
}

main();
