// Drives the dashboard views issue 42 changed, for
// tests/integration/test_dashboard_issue42.py. SCENARIO.part says which:
//  "a": a group's flame graph under a device filter, the top navigation
//     and the overview's and comparison's forms keeping the filters, the
//     version pick list's order under a day range, the missing dSYMs at a
//     phone's width with their app versions, the trace offered only with
//     samples, image basenames in the stack, groups of one culprit told
//     apart and gathered, the tabs' titles;
//  "b": percentiles and the rate's basis, a group's breakdowns, the frame
//     search, a user's reports, hang-free users and adoption, the
//     comparison's statistics.
// It asserts nothing itself: it prints what the pages showed as JSON.
//
//   node issue42.mjs SCENARIO.json
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { attr, launch, openPage, overflowOf, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = {};

const browser = await launch(chromium);
try {
  const { page, measure } = await openPage(browser, seen);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const go = async (hash, ready) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await settled(page);
    if (ready) await page.waitForSelector(ready);
  };
  const hashNow = () => page.evaluate(() => location.hash);

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
    await settled(page);
  });

  if (s.part === 'a') {
    seen.device_flame = await step('flame graph under a device filter', async () => {
      await go(s.device_hash, '#flame .flame-node[data-root]');
      return {
        header_reports: await page.innerText('#group-reports'),
        root_count: Number(await page.getAttribute('#flame .flame-node[data-root]', 'data-count')),
        tree_requests: requests.filter((u) => u.includes('/tree')),
        title: await page.title(),
      };
    });

    seen.nav = await step('the top navigation keeps the filters', async () => {
      await go(s.filtered_list_hash, '#groups tr[data-key1]');
      const out = { list_title: await page.title(), hrefs: {} };
      for (const id of ['nav-overview', 'nav-groups', 'nav-compare', 'nav-missing']) {
        out.hrefs[id] = await page.getAttribute(`#${id}`, 'href');
      }
      await page.click('#nav-overview');
      await settled(page);
      out.overview_hash = await hashNow();
      await page.click('#nav-groups');
      await settled(page);
      await page.waitForSelector('#groups-filters');
      out.back_hash = await hashNow();
      out.device_chosen = await page.$eval('#filter-device', (el) => el.selectedOptions[0]?.dataset.v ?? null);
      return out;
    });

    // Each form changes its own fields and keeps the others of the address.
    seen.forms = await step('the overview and compare forms keep the filters', async () => {
      await go(s.overview_hash, '#overview-filters');
      await page.fill('#overview-from', s.form_day);
      await page.click('#overview-apply');
      await page.waitForFunction(() => location.hash.includes('from='));
      await settled(page);
      const overview = await hashNow();
      await go(s.compare_form_hash, '#compare-form');
      await page.fill('#compare-from', s.form_day);
      await page.click('#compare-apply');
      await page.waitForFunction(() => location.hash.includes('from='));
      await settled(page);
      return { overview, compare: await hashNow() };
    });

    seen.versions = await step('the version pick list under a day range', async () => {
      await go(s.range_hash, '#filter-version');
      return page.$$eval('#filter-version option', (os) => os.map((o) => o.dataset.v ?? null));
    });

    seen.report = await step('a report without samples', async () => {
      await go(`#/reports/${s.unsampled_id}`, '#report li.frame');
      return {
        trace_offered: Boolean(await page.$('#report-trace')),
        images: await page.$$eval('#report .frame-head .image', (els) =>
          els.map((e) => ({ text: e.textContent, title: e.getAttribute('title') }))),
        title: await page.title(),
      };
    });
    seen.sampled = await step('a report with samples', async () => {
      await go(`#/reports/${s.sampled_id}`, '#report li.frame');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#report-trace')]);
      return { json: JSON.parse(readFileSync(await download.path(), 'utf8')) };
    });

    seen.dups = await step('groups of one culprit', async () => {
      await go('#/groups?status=all', '#groups tr[data-key1]');
      const rows = await page.$$eval('#groups tr[data-key1]', (rs) => rs.map((r) => ({
        key: r.dataset.key1,
        culprit: r.querySelector('.culprit .fn')?.textContent ?? null,
        innermost: r.querySelector('.innermost .mono')?.textContent ?? null,
      })));
      await page.click('#groups-by-culprit');
      await settled(page);
      await page.waitForSelector('#by-culprit tr[data-groups]');
      await measure('by culprit');
      return {
        rows,
        hash: await hashNow(),
        note: await page.innerText('#by-culprit-note'),
        gathered: await page.$$eval('#by-culprit tbody tr', (rs) => rs.map((r) => ({
          culprit: r.dataset.culprit, groups: Number(r.dataset.groups),
          cells: [...r.querySelectorAll('td.num')].map((td) => td.textContent),
          links: [...r.querySelectorAll('a[data-key1]')].map((a) => ({ key: a.dataset.key1, href: a.getAttribute('href') })),
        }))),
      };
    });

    seen.missing = await step('missing dSYMs on a phone', async () => {
      await page.setViewportSize({ width: 390, height: 800 });
      await go('#/missing', `#missing tr${attr('data-uuid', s.missing_uuid)}`);
      const row = `#missing tr${attr('data-uuid', s.missing_uuid)}`;
      return {
        overflow: await overflowOf(page),
        uuid: await page.$eval(`${row} td.uuid`, (td) => {
          const r = td.getBoundingClientRect();
          return { text: td.textContent, title: td.getAttribute('title'), right: r.right, left: r.left,
            scroll: td.scrollWidth, client: td.clientWidth };
        }),
        image: await page.$eval(`${row} td.path span`, (el) => ({ text: el.textContent, title: el.getAttribute('title') })),
        last_seen: await page.$eval(`${row} time`, (el) => el.textContent),
        versions: await page.$eval(`${row} td.app-versions`, (td) => td.textContent),
        heads: await page.$$eval('#missing thead th', (ths) => ths.map((th) => th.textContent)),
        table_scrolls: await page.$eval('#missing', (t) => t.scrollWidth > t.clientWidth + 0.5),
      };
    });
  } else {
    seen.group = await step('percentiles, rate basis and breakdowns', async () => {
      await go(s.group_hash, '#breakdown');
      const out = {
        percentiles: await page.innerText('#group-percentiles'),
        rate: await page.innerText('#group-rate'),
        note: await page.$eval('#group-rate', (el) => el.querySelector('.rate-basis')?.textContent ?? null),
        breakdown: await page.$$eval('#breakdown table.breakdown', (ts) => Object.fromEntries(ts.map((t) =>
          [t.closest('[data-dim]').dataset.dim, [...t.querySelectorAll('tbody tr')].map((r) => ({
            value: r.dataset.other === 'true' ? null : r.dataset.value, share: r.dataset.share,
            cells: [...r.querySelectorAll('td.num')].map((td) => td.textContent) }))]))),
      };
      await measure('group with breakdowns');
      const link = `#breakdown-device a`;
      out.clicked_value = await page.$eval(link, (a) => a.textContent);
      await page.click(link);
      await settled(page);
      out.after_click = await hashNow();
      return out;
    });

    // The note under the rate: only under an OS version or device filter
    // whose denominator is every device's users.
    seen.basis = await step('the rate\'s basis', async () => {
      const noteOf = (sel) => page.$eval(sel, (el) => el.querySelector('.rate-basis')?.textContent ?? null);
      await go(s.os_list_hash, '#groups tr[data-key1]');
      const list = await page.$$eval('#groups tr[data-key1]', (rs) => rs.map((r) => ({
        key: r.dataset.key1, basis: r.dataset.rateBasis,
        note: r.querySelector('.rate-basis')?.textContent ?? null })));
      await measure('groups under an OS version filter');
      await go(s.filtered_basis_hash, '#group-rate');
      const filtered = await noteOf('#group-rate');
      await go(s.unfiltered_hash, '#group-rate');
      return { list, filtered, unfiltered: await noteOf('#group-rate') };
    });

    seen.list = await step('percentiles in the list and the search', async () => {
      await go('#/groups', '#groups tr[data-key1]');
      const rows = await page.$$eval('#groups tr[data-key1]', (rs) => rs.map((r) => ({
        key: r.dataset.key1, p50: r.dataset.p50Ms, p90: r.dataset.p90Ms, p99: r.dataset.p99Ms })));
      await page.fill('#filter-q', s.search);
      await page.click('#filters-apply');
      await page.waitForFunction(() => location.hash.includes('q='));
      await settled(page);
      const found = await page.$$eval('#groups tr[data-key1]', (rs) => rs.map((r) => r.dataset.key1));
      return { rows, found, hash: await hashNow(), q_kept: await page.inputValue('#filter-q') };
    });

    seen.user = await step('a user\'s reports', async () => {
      await go('#/users', '#user-form');
      await page.fill('#user-id', s.user);
      await page.click('#user-find');
      await settled(page);
      await page.waitForSelector('#user-reports tr[data-report-id]');
      return page.$$eval('#user-reports tr[data-report-id]', (rs) => rs.map((r) => ({
        id: r.dataset.reportId, href: r.querySelector('a').getAttribute('href') })));
    });

    seen.overview = await step('hang-free users and adoption', async () => {
      await go('#/overview', '#overview-versions tr[data-version]');
      return page.$$eval('#overview-versions tr[data-version]', (rs) => rs.map((r) => ({
        version: r.dataset.version, day: r.dataset.day, hang_free: r.dataset.hangFree, adoption: r.dataset.adoption })));
    });

    seen.compare = await step('the comparison\'s statistics', async () => {
      await go(s.compare_hash, '#compare tr[data-key1]');
      await measure('compare');
      const rows = await page.$$eval('#compare tr[data-key1]', (rs) => rs.map((r) => ({
        key: r.dataset.key1, culprit: r.querySelector('.culprit .fn')?.textContent ?? null,
        rates: [...r.querySelectorAll('td.side')].map((td) => td.dataset.rate),
        p_value: r.querySelector('td.diff').dataset.pValue,
        ci: r.querySelector('td.diff').dataset.ci,
        diff: r.querySelector('td.diff').innerText,
        reports: [...r.querySelectorAll('.side-reports')].map((e) => e.textContent),
        stall: [...r.querySelectorAll('.side-stall')].map((e) => e.textContent),
        href: r.querySelector('a').getAttribute('href') })));
      const hint = await page.innerText('form#compare-form ~ p.hint');
      const more_hidden = await page.$eval('#compare-more', (b) => b.hidden);
      const asked = requests.filter((u) => u.includes('/compare?')).pop();
      // A click on a row (not its link) opens the group.
      await page.click('#compare tr[data-key1] td.diff');
      await page.waitForFunction(() => location.hash.startsWith('#/groups/'));
      await settled(page);
      return { rows, hint, more_hidden, asked, clicked: await hashNow() };
    });
    seen.compare_same = await step('one version on both sides', async () => {
      const before = requests.filter((u) => u.includes('/compare')).length;
      await go(s.compare_same_hash, '#compare-same');
      return { text: await page.innerText('#compare-same'),
        compare_requests: requests.filter((u) => u.includes('/compare')).length - before };
    });
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
