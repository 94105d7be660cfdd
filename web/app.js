// stallscope dashboard: a small single-page app over the JSON API
// (SPEC §7), as ES modules the browser loads itself: no framework and no
// build step. This entry holds the table of routes; lib-*.js are the
// pieces every page shares, view-*.js one page each, named after it.

import { $ } from './lib-dom.js';
import { FILTERS, LIST_PARAMS, keepFiltersInNav, paramsOf } from './lib-filters.js';
import { platformNav } from './lib-platform.js';
import { parseHash, route, startRouter } from './lib-router.js';
import { compareView } from './view-compare.js';
import { configView } from './view-config.js';
import { framesView } from './view-frames.js';
import { groupView } from './view-group.js';
import { groupsView } from './view-groups.js';
import { missingView } from './view-missing.js';
import { overviewView } from './view-overview.js';
import { reportView } from './view-report.js';
import { groupReportsView } from './view-reports.js';
import { signIn, signOut } from './view-signin.js';
import { userView } from './view-user.js';
import { webhooksView } from './view-webhooks.js';
import { whitelistView } from './view-whitelist.js';

// '#/' + PARTS → the view rendering it, or null (the router then goes to
// #/groups). The group pages take the list's filters from the query.
function viewFor(parts, query, gen) {
  const [head, a, b, ...rest] = parts;
  const f = paramsOf(query, LIST_PARAMS);
  keepFiltersInNav(query);
  // Not awaited: the entries follow once the app's kinds are known.
  platformNav();
  if (head === 'groups' && rest.length === 0) {
    if (!a) return () => groupsView(f, gen);
    if (!b) return () => groupView(a, f);
    return () => groupReportsView(a, b, f, gen);
  }
  if (head === 'reports' && a && !b) return () => reportView(a, f);
  // The overview and the comparison keep the other filters for the way
  // on, as the top navigation does.
  if (head === 'overview' && !a) return () => overviewView(paramsOf(query, FILTERS));
  if (head === 'compare' && !a) return () => compareView(paramsOf(query, ['base', 'target', ...FILTERS]));
  if (head === 'frames' && !a) return () => framesView(paramsOf(query, ['scene', ...FILTERS]));
  if (head === 'users' && !a) return () => userView(paramsOf(query, ['user_id', 'from', 'to']), gen);
  if (head === 'missing' && !a) return () => missingView(gen);
  if (head === 'whitelist' && !a) return () => whitelistView(gen);
  if (head === 'webhooks' && !a) return () => webhooksView(gen);
  if (head === 'config' && !a) return () => configView();
  return null;
}

$('signin').addEventListener('submit', async (ev) => {
  if (!(await signIn(ev))) return;
  if (parseHash().parts.length === 0) location.hash = '#/groups';
  else route();
});
$('signout').addEventListener('click', signOut);
startRouter(viewFor);
