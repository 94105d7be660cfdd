// The JSON API client (SPEC §7): the credentials every call carries, the
// calls themselves, and what their errors mean to a user.

import { $ } from './lib-dom.js';

const STORE_APP = 'stallscope.app';
const STORE_TOKEN = 'stallscope.token';
export const PAGE = 50; // rows per page of groups, reports and missing images

// Changed in place (setSession, forgetToken), so every module reads the
// same credentials.
export const session = {
  app: localStorage.getItem(STORE_APP) || '',
  token: localStorage.getItem(STORE_TOKEN) || '',
};

export function setSession(app, token) {
  session.app = app;
  session.token = token;
}

export function keepSession() {
  localStorage.setItem(STORE_APP, session.app);
  localStorage.setItem(STORE_TOKEN, session.token);
}

// The bundle id stays, to prefill the next sign-in.
export function forgetToken() {
  localStorage.removeItem(STORE_APP);
  localStorage.removeItem(STORE_TOKEN);
  session.token = '';
}

export function signedIn() {
  return Boolean(session.app && session.token);
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let inflight = 0;
function busy(delta) {
  inflight += delta;
  $('loading').hidden = inflight === 0;
  $('view').setAttribute('aria-busy', String(inflight > 0));
}

// The Response of a successful call; anything else becomes an ApiError
// carrying the server's {"error":{"code","message"}}.
export async function request(method, path, body) {
  const init = { method, cache: 'no-store', headers: { Authorization: `Bearer ${session.token}` } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  busy(+1);
  try {
    resp = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'Cannot reach the server.');
  } finally {
    busy(-1);
  }
  if (resp.ok) return resp;
  let err = {};
  try {
    err = (await resp.json()).error || {};
  } catch { /* not JSON: a proxy's page, say */ }
  throw new ApiError(resp.status, err.code || `http_${resp.status}`, err.message || resp.statusText);
}

export async function api(method, path, body) {
  const resp = await request(method, path, body);
  if (resp.status === 204) return null;
  busy(+1);
  try {
    return await resp.json();
  } finally {
    busy(-1);
  }
}

const enc = encodeURIComponent;

export function appPath(...parts) {
  return `/api/v1/apps/${enc(session.app)}` + parts.map((p) => '/' + enc(p)).join('');
}

export function reportPath(id, ...parts) {
  return `/api/v1/reports/${enc(id)}` + parts.map((p) => '/' + enc(p)).join('');
}

// PARAMS' null and undefined values are left out; '' is sent (a filter on
// a dimension's '' matches reports without that field).
export function withQuery(path, params) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v != null) qs.set(k, v);
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

// Errors that mean "these credentials do not work here": back to sign-in.
export function isAuthError(e) {
  return e instanceof ApiError &&
    (e.status === 401 || e.status === 403);
}

export function plainMessage(e) {
  if (!(e instanceof ApiError)) return `Something went wrong in the page: ${e.message || e}`;
  const detail = e.message ? ` (${e.message})` : '';
  switch (e.code) {
    case 'network': return 'Cannot reach the stallscope server. Check that it is running and try again.';
    case 'unauthorized': return 'The admin token was not accepted. Please sign in again.';
    // The server answers the same whether or not the app exists
    // (docs/SERVER.md), so the page cannot tell a typo from a wrong token.
    case 'forbidden': return `This token does not give access to the app “${session.app}” (check the bundle id too).`;
    case 'not_found': return `Not found${detail}. It may have been deleted or purged by retention.`;
    case 'database_unavailable':
    case 'shutting_down': return 'The server is temporarily unavailable. Try again in a moment.';
    case 'bad_query':
    case 'bad_field':
    case 'bad_json':
    case 'bad_cursor': return `The server refused the request${detail}.`;
    default: return `The server answered ${e.status || 'with an error'}${detail}.`;
  }
}
