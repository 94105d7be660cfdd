// The page around the views: sign-in form or app, the error box, and the
// state of a button while its action runs.

import { $ } from './lib-dom.js';
import { isAuthError, plainMessage, session } from './lib-api.js';

export function showSignin(message) {
  $('signin-view').hidden = false;
  $('view').hidden = true;
  $('nav').hidden = true;
  $('session').hidden = true;
  // Prefill only: what the user is typing wins over the stored bundle id.
  if (!$('signin-app').value) $('signin-app').value = session.app;
  if (message) {
    $('error').textContent = message;
    $('error').hidden = false;
  }
  document.title = 'Sign in · stallscope';
  ($('signin-app').value ? $('signin-token') : $('signin-app')).focus();
}

export function showApp() {
  $('signin-view').hidden = true;
  $('view').hidden = false;
  $('nav').hidden = false;
  $('session').hidden = false;
  $('session-app').textContent = session.app;
}

export function showError(e) {
  if (isAuthError(e)) {
    showSignin(plainMessage(e));
    return;
  }
  const box = $('error');
  box.textContent = typeof e === 'string' ? e : plainMessage(e);
  box.hidden = false;
}

export function clearError() {
  $('error').textContent = '';
  $('error').hidden = true;
}

// Runs an action triggered from within a view (load more, delete, save):
// the button is disabled meanwhile and failures land in #error.
export async function act(button, fn) {
  button.disabled = true;
  clearError();
  try {
    await fn();
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}
