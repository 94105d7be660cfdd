// Which half of Matrix an app reports from (SPEC §13): its groups' kinds
// say it — iOS sends stall, hang, cpu and crash; Android's TraceCanary
// slow_method, anr, lag, slow_startup and thread_policy. The pages that
// only an Android app has (frames per scene, startup times, method
// mappings) are offered when the dimensions list an Android kind.

import { $ } from './lib-dom.js';
import { session } from './lib-api.js';
import { dimensions } from './lib-filters.js';
import { ANDROID_KINDS } from './lib-format.js';

const ANDROID = new Set(ANDROID_KINDS.map(([k]) => k));

export const isAndroid = (dims) => (dims?.kinds || []).some((d) => ANDROID.has(d.value));

// The signed-in app's all-time dimensions, kept a minute per app: the top
// navigation shows the Android pages from them on every route, and an app
// whose first reports arrive meanwhile gets them soon after.
const KEEP_MS = 60000;
let known = { app: null, at: 0, dims: null };

export async function appDimensions() {
  if (known.app !== session.app || Date.now() - known.at > KEEP_MS) {
    known = { app: session.app, at: Date.now(), dims: dimensions() };
  }
  try {
    return await known.dims;
  } catch (e) {
    known = { app: null, at: 0, dims: null };
    throw e;
  }
}

// Shows the frames page's entry for an Android app; the missing-files
// entry names what such an app uploads too.
export async function platformNav() {
  let android = false;
  try {
    android = isAndroid(await appDimensions());
  } catch {
    return; // the view's own calls say what is wrong
  }
  $('nav-frames').hidden = !android;
  $('nav-missing').textContent = android ? 'Missing mappings' : 'Missing dSYMs';
}
