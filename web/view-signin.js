// Sign-in and sign-out: the bundle id and admin token every call carries
// (kept in local storage until sign-out). Showing the form is lib-page.js's,
// as any call answered 401 or 403 leads back to it.

import { $ } from './lib-dom.js';
import { api, appPath, forgetToken, keepSession, plainMessage, session, setSession } from './lib-api.js';
import { clearError, showSignin } from './lib-page.js';

// Whether the credentials typed in work: true once they are kept.
export async function signIn(ev) {
  ev.preventDefault();
  const app = $('signin-app').value.trim();
  const token = $('signin-token').value.trim();
  if (!app || !token) return false;
  const previous = { ...session };
  setSession(app, token);
  clearError();
  const button = $('signin-submit');
  button.disabled = true;
  try {
    // Checks both the bundle id and the token before keeping them.
    await api('GET', appPath('config'));
  } catch (e) {
    const message = plainMessage(e); // names the bundle id just tried
    setSession(previous.app, previous.token);
    showSignin(message);
    return false;
  } finally {
    button.disabled = false;
  }
  keepSession();
  $('signin-token').value = '';
  return true;
}

export function signOut() {
  forgetToken();
  $('view').replaceChildren();
  clearError();
  showSignin();
}
