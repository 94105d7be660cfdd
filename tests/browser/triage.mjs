// Drives the dashboard's triage views in headless Chromium for
// tests/integration/test_dashboard_triage.py: the groups list as it opens
// (sorted by stall time) and sorted by reports, the release comparison
// with its default versions and with two chosen ones, the app overview, a
// group's duration histogram, another group's flame graph zoomed in and
// out, and one of its subgroups'. It asserts nothing itself: it prints
// what the pages showed as JSON, and the Python test compares that with
// what it posted and with the API. Every view is measured for sideways
// scroll at 1280 px and at a phone's 390 px.
//
//   node triage.mjs SCENARIO.json
// SCENARIO: {url, app, token, tree_key, tree_key2, hist_key, zoom_path: [frame, …],
//            choose: {base, target}}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { attr, launch, openPage, overflowOf, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = {};

const browser = await launch(chromium);
try {
  const { page, measure } = await openPage(browser, seen);
  // Every node of the flame graph but the root, with its drawn width.
  const flameNodes = () => page.$$eval('#flame .flame-node', (els) => {
    const graph = document.getElementById('flame').getBoundingClientRect();
    return els.filter((e) => !e.dataset.root).map((e) => ({
      path: e.dataset.path, count: Number(e.dataset.count), self: Number(e.dataset.self),
      width: e.getBoundingClientRect().width, graph_width: graph.width,
    }));
  });
  const go = async (hash, ready) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await settled(page);
    await page.waitForSelector(ready);
  };

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
  });

  seen.groups = await step('groups list', async () => {
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1]');
    await measure('groups');
    return page.$$eval('#groups tr[data-key1]', (rows) => rows.map((r) => ({
      key: r.dataset.key1, stall_ms: r.dataset.stallMs, affected: r.dataset.affected,
      rate: r.dataset.rate, p90: r.dataset.p90, text: r.innerText,
      title: r.querySelector('td.frames').innerText,
    })));
  });

  seen.by_count = await step('the list sorted by reports', async () => {
    await page.selectOption('#filter-sort', 'count');
    await page.click('#filters-apply');
    await page.waitForFunction(() => location.hash.includes('sort=count'));
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1]');
    return page.$$eval('#groups tr[data-key1]', (rows) => rows.map((r) => r.dataset.key1));
  });

  const compared = () => page.$eval('#compare', (t) => ({
      base: t.dataset.base, target: t.dataset.target,
      rows: [...t.querySelectorAll('tr[data-key1]')].map((r) => ({
        key: r.dataset.key1, verdict: r.dataset.verdict,
        badge: r.querySelector('.badge').textContent,
        rates: [...r.querySelectorAll('td[data-rate]')].map((td) => td.dataset.rate),
        href: r.querySelector('a').getAttribute('href'),
      })),
    }));
  seen.compare = await step('release comparison', async () => {
    await page.click('#nav-compare');
    await settled(page);
    await page.waitForSelector('#compare tr[data-key1]');
    await measure('compare');
    return compared();
  });
  seen.compare_chosen = await step('two versions chosen', async () => {
    await page.selectOption('#compare-base', s.choose.base);
    await page.selectOption('#compare-target', s.choose.target);
    await page.click('#compare-apply');
    await page.waitForFunction((t) => location.hash.includes(`target=${t}`), s.choose.target);
    await settled(page);
    await page.waitForSelector('#compare tr[data-key1]');
    return compared();
  });

  seen.overview = await step('overview', async () => {
    await page.click('#nav-overview');
    await settled(page);
    await page.waitForSelector('#rate-chart');
    await measure('overview');
    return {
      rows: await page.$$eval('#overview tr[data-day]', (rows) => rows.map((r) => ({
        day: r.dataset.day, version: r.dataset.version,
        cells: [...r.querySelectorAll('td.num')].map((td) => td.textContent),
      }))),
      dots: await page.$$eval('#rate-chart circle', (cs) => cs.map((c) => ({ ...c.dataset }))),
      legend: await page.$$eval('.legend li', (ls) => ls.map((l) => l.textContent)),
    };
  });

  seen.hist = await step('duration histogram', async () => {
    await go(`#/groups/${s.hist_key}`, '#duration-hist li');
    await measure('group');
    return page.$$eval('#duration-hist li', (ls) => ls.map((l) => Number(l.dataset.count)));
  });

  seen.flame = await step('flame graph', async () => {
    await go(`#/groups/${s.tree_key}`, '#flame .flame-node');
    await measure('flame');
    const all = await flameNodes();
    const rootCount = Number(await page.getAttribute('#flame .flame-node[data-root]', 'data-count'));
    const target = `#flame .flame-node${attr('data-path', JSON.stringify(s.zoom_path))}`;
    await page.hover(target);
    const hover = await page.innerText('#flame-detail');
    await page.click(target);
    await page.waitForFunction((p) => document.getElementById('flame').dataset.focus === p,
      JSON.stringify(s.zoom_path));
    const zoomedNodes = await flameNodes();
    const zoomed = {
      focus: await page.getAttribute('#flame', 'data-focus'),
      nodes: zoomedNodes, graph_width: zoomedNodes[0]?.graph_width,
    };
    // The focused node is on top of its subtree: a click zooms out a step.
    await page.click(target);
    const parent = JSON.stringify(s.zoom_path.slice(0, -1));
    await page.waitForFunction((p) => document.getElementById('flame').dataset.focus === p, parent);
    return { nodes: all, root_count: rootCount, hover, zoomed,
      unzoomed_focus: await page.getAttribute('#flame', 'data-focus') };
  });

  seen.subgroup_flame = await step('a subgroup\'s flame graph', async () => {
    await go(`#/groups/${s.tree_key}/${s.tree_key2}`, '#flame .flame-node');
    await measure('subgroup');
    return flameNodes();
  });

  seen.phone = await step('phone width', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    const out = [];
    const views = [['#/groups', '#groups tr[data-key1]'], ['#/compare', '#compare tr[data-key1]'],
      ['#/overview', '#rate-chart'], [`#/groups/${s.hist_key}`, '#duration-hist'],
      [`#/groups/${s.tree_key}`, '#flame .flame-node'],
      [`#/groups/${s.tree_key}/${s.tree_key2}`, '#flame .flame-node']];
    for (const [hash, ready] of views) {
      await go(hash, ready);
      out.push({ view: hash, ...(await overflowOf(page)) });
    }
    return out;
  });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
