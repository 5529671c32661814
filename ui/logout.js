// The header's "Log out": ends the browser session on the server (POST /logout with the
// CSRF value), so the cookie is worth nothing even if it was copied; then the page says
// how to log in again (`ducklm open`).

import { logout } from "./api.js";
import { showError } from "./notify.js";

/** Wire `button` to log this browser out. */
export function initLogout(button) {
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await logout();
    } catch (error) {
      button.disabled = false;
      showError(error);
      return;
    }
    location.assign("/");
  });
}
