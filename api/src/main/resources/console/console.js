// WarmMetal fleet console. Everything it shows comes from the API with the token the user typed in; the token
// lives in sessionStorage (this tab only) and goes out only as an Authorization header, never in a URL.
const TOKEN_KEY = 'warmmetal.token';
const MACHINE_STATES = ['enrolling', 'new', 'preparing', 'warm', 'joining', 'in-use', 'pre-joined', 'resetting',
  'standby', 'rebooting', 'offline', 'failed', 'retired'];
const TICK_MS = 1000;
const KEEP_EVENTS = 200;
const KEEP_SAMPLES = 300;
const SHOWN_ROWS = 200;
const PAGE = 1000;
/** Instances are listed oldest first and shown newest first: read at most this many pages of them. */
const INSTANCE_PAGES = 10;

const $ = (sel, root = document) => root.querySelector(sel);

class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

/** Thrown after a 401 has sent the user back to the login page: callers just stop. */
class LoggedOut extends Error {}

async function api(path, method = 'GET') {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) throw new LoggedOut();
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    cache: 'no-store', credentials: 'omit',
  });
  if (res.status === 401) {
    logout('The API refused this token (401): it is unknown or revoked. Log in with another.');
    throw new LoggedOut();
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

/** A query string from the non-empty values. */
function query(params) {
  const q = new URLSearchParams();
  Object.entries(params).forEach(([k, v]) => { if (v !== undefined && v !== null && v !== '') q.set(k, v); });
  const s = q.toString();
  return s ? `?${s}` : '';
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  Object.entries(attrs).forEach(([k, v]) => {
    if (k === 'class') node.className = v;
    else if (k.startsWith('data-')) node.setAttribute(k, v);
    else node[k] = v;
  });
  children.flat().forEach(c => node.append(c instanceof Node ? c : document.createTextNode(c ?? '')));
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleTimeString() : '';
}

/**
 * Shows a panel's notice: its trouble in words (what the role cannot see, or what failed) or the outcome of an
 * action (info). Empty clears it. How many rows a list shows is the pager's, never a notice: nothing wipes it.
 */
function notice(panel, text, kind = 'error') {
  const p = $(`#${panel} .notice`);
  p.textContent = text || '';
  p.className = `notice ${text ? kind : ''}`;
}

/** Clears the notice a failed load left; an action's outcome (info) stays until the next action replaces it. */
function clearTrouble(panel) {
  const p = $(`#${panel} .notice`);
  if (p.classList.contains('error') || p.classList.contains('forbidden')) notice(panel, '');
}

/** A list's pager: how many rows show out of how many (when known), and whether a button can show more. */
function pager(panel, text, more) {
  $(`#${panel} .pager .count`).textContent = text;
  $(`#${panel} .pager .more`).hidden = !more;
}

function explain(err, what) {
  if (err instanceof ApiError && err.status === 403) {
    return `Your token's role cannot see ${what} (${err.message}). Project tokens see their project's instances, `
      + 'their events and the shapes; those panels still work.';
  }
  return `Could not load ${what}: ${err.message}. Retrying.`;
}

/** Runs a panel's loader; a refusal or failure becomes the panel's notice instead of breaking the page. */
async function guarded(panel, what, load) {
  try {
    await load();
    clearTrouble(panel);
    state.forbidden.delete(panel);
    return true;
  } catch (err) {
    if (err instanceof LoggedOut) throw err;
    const refused = err instanceof ApiError && err.status === 403;
    if (refused) state.forbidden.add(panel); // the role will not change: stop asking until the user does
    notice(panel, explain(err, what), refused ? 'forbidden' : 'error');
    return false;
  }
}

// ---- state -------------------------------------------------------------------------------------------------

const state = {
  cursor: null, events: [], samples: [], instances: new Map(), shapes: [], pools: [],
  timer: null, tick: 0, machinesDirty: true, machinesLoadedAt: 0, changedInstances: new Set(), forbidden: new Set(),
  poolsRefused: null,
  machinesWanted: SHOWN_ROWS, // machine rows to read: a page more per "Load more", back to one on a new filter
  instancesShown: SHOWN_ROWS, // the newest this many of the instances read
  instancesCapped: false, // more instances on the server than INSTANCE_PAGES pages
};

// ---- pools and shapes --------------------------------------------------------------------------------------

async function loadPools() {
  await guarded('pools', 'the shapes', async () => {
    state.shapes = (await api('/v1/shapes')).items;
  });
  // A role without fleet-read is refused pools once; the shapes' counts stand in from then on.
  const refusedBefore = state.poolsRefused && state.poolsRefused.status === 403;
  try {
    if (!refusedBefore) {
      state.pools = (await api('/v1/pools')).items;
      state.poolsRefused = null;
    }
  } catch (err) {
    if (err instanceof LoggedOut) throw err;
    state.pools = [];
    state.poolsRefused = err;
  }
  renderPools();
  const poolsRefused = state.poolsRefused;
  if (poolsRefused) {
    notice('pools', explain(poolsRefused, 'the pools (warm targets and deficits); machine counts per shape are '
      + 'shown instead'), poolsRefused.status === 403 ? 'forbidden' : 'error');
  }
  sample();
  fillShapeFilter();
}

function poolRow(shape) {
  const pool = state.pools.find(p => p.shape === shape.name);
  const c = shape.counts || {};
  const inUse = (c.joining || 0) + (c['in-use'] || 0) + (c.resetting || 0);
  return {
    shape: shape.name, warm: pool ? pool.warm : (c.warm || 0), preparing: pool ? pool.preparing : (c.preparing || 0),
    standby: pool ? pool.standby : (c.standby || 0), inUse: pool ? pool.inUse : inUse,
    preJoined: pool ? pool.preJoined : (c['pre-joined'] || 0),
    minWarm: pool ? pool.minWarm : null, maxWarm: pool ? pool.maxWarm : null, deficit: pool ? pool.deficit : null,
    total: shape.total,
  };
}

function renderPools() {
  const names = new Set(state.shapes.map(s => s.name));
  // A pool whose shape has no machine yet still shows.
  const shapes = state.shapes.concat(state.pools.filter(p => !names.has(p.shape))
    .map(p => ({ name: p.shape, counts: {}, total: 0 })));
  const rows = shapes.map(poolRow).map(r => el('tr', { 'data-shape': r.shape, class: r.deficit ? 'short' : '' },
    el('td', {}, r.shape),
    el('td', { class: 'warm' }, String(r.warm)),
    el('td', { class: 'preparing' }, String(r.preparing)),
    el('td', { class: 'standby' }, String(r.standby)),
    el('td', { class: 'in-use' }, String(r.inUse)),
    el('td', { class: 'pre-joined' }, String(r.preJoined)),
    el('td', {}, r.minWarm === null ? '—' : `${r.minWarm} / ${r.maxWarm}`),
    el('td', { class: 'deficit' }, r.deficit === null ? '—' : String(r.deficit)),
    el('td', {}, String(r.total)),
    el('td', {}, fillBar(r))));
  $('#pools tbody').replaceChildren(...rows);
}

/** Warm and preparing against minWarm, as a small bar. */
function fillBar(r) {
  const scale = Math.max(r.minWarm || 0, r.maxWarm || 0, r.warm + r.preparing, 1);
  const w = v => (100 * v / scale).toFixed(1);
  const bar = svg('svg', { viewBox: '0 0 100 10', class: 'fill' });
  bar.append(svg('rect', { x: 0, y: 0, width: w(r.warm), height: 10, class: 'warm' }));
  bar.append(svg('rect', { x: w(r.warm), y: 0, width: w(r.preparing), height: 10, class: 'preparing' }));
  if (r.minWarm) bar.append(svg('line', { x1: w(r.minWarm), x2: w(r.minWarm), y1: 0, y2: 10, class: 'min' }));
  return bar;
}

function fillShapeFilter() {
  const select = $('#machine-filters [name=shape]');
  const have = new Set([...select.options].map(o => o.value));
  state.shapes.filter(s => !have.has(s.name)).forEach(s => select.append(el('option', { value: s.name }, s.name)));
}

// ---- charts ------------------------------------------------------------------------------------------------

function sample() {
  const byShape = {};
  state.shapes.forEach(s => { const r = poolRow(s); byShape[s.name] = { warm: r.warm, minWarm: r.minWarm }; });
  state.samples.push({ t: Date.now(), byShape });
  if (state.samples.length > KEEP_SAMPLES) state.samples.shift();
  drawFill();
}

function drawFill() {
  const chart = $('#fill-chart');
  const samples = state.samples;
  const shapes = [...new Set(samples.flatMap(s => Object.keys(s.byShape)))].slice(0, 6);
  const max = Math.max(1, ...samples.flatMap(s => Object.values(s.byShape).map(v => Math.max(v.warm, v.minWarm || 0))));
  const t0 = samples.length ? samples[0].t : 0;
  const span = Math.max(1, (samples.length ? samples[samples.length - 1].t : 0) - t0);
  const x = t => 30 + 360 * (t - t0) / span;
  const y = v => 140 - PLOT_HEIGHT * v / max;
  const parts = [axes(max, `${Math.round(span / 1000)} s`)];
  shapes.forEach((shape, i) => {
    const pts = samples.filter(s => s.byShape[shape]).map(s => `${x(s.t).toFixed(1)},${y(s.byShape[shape].warm).toFixed(1)}`);
    parts.push(svg('polyline', { points: pts.join(' '), class: `line c${i}`, 'data-shape': shape }));
    const min = samples.length ? samples[samples.length - 1].byShape[shape]?.minWarm : null;
    if (min) parts.push(svg('line', { x1: 30, x2: 390, y1: y(min), y2: y(min), class: `target c${i}` }));
    // Above the plot, a swatch of the line beside each name: a line at the top never runs through the legend.
    const lx = 36 + 120 * (i % 3);
    const ly = 9 + 10 * Math.floor(i / 3);
    parts.push(svg('line', { x1: lx, x2: lx + 12, y1: ly - 3, y2: ly - 3, class: `swatch c${i}` }));
    parts.push(svg('text', { x: lx + 16, y: ly, class: `legend c${i}` }, shape));
  });
  chart.replaceChildren(...parts);
}

/** Both charts plot from y = 140 up this far, leaving the top rows of the 160-high view to the legend. */
const PLOT_HEIGHT = 112;

function axes(max, xLabel) {
  const g = svg('g', { class: 'axes' });
  const top = 140 - PLOT_HEIGHT;
  g.append(svg('line', { x1: 30, x2: 30, y1: top, y2: 140 }), svg('line', { x1: 30, x2: 390, y1: 140, y2: 140 }));
  g.append(svg('text', { x: 26, y: top + 4, 'text-anchor': 'end' }, String(max)));
  g.append(svg('text', { x: 26, y: 143, 'text-anchor': 'end' }, '0'));
  if (xLabel) g.append(svg('text', { x: 390, y: 155, 'text-anchor': 'end' }, xLabel));
  return g;
}

const LATENCY_BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, Infinity];

/** Cumulative counts of successful launches by upper bound (ms), from GET /v1/launch-latency. */
function launchBuckets(latency) {
  return latency.buckets.map(b => [b.leSeconds * 1000, b.launches]).sort((a, b) => a[0] - b[0]);
}

/** The cumulative count at the largest bucket bound not above {@code ms}. */
function cumulativeAt(buckets, ms) {
  let n = 0;
  buckets.forEach(([le, c]) => { if (le <= ms) n = c; });
  return n;
}

function quantile(buckets, q) {
  const total = buckets.length ? buckets[buckets.length - 1][1] : 0;
  const hit = buckets.find(([, c]) => c >= q * total);
  return total && hit ? hit[0] : null;
}

async function loadLatency() {
  // The histogram Prometheus scrapes on the management port, through the API with the token: it counts every
  // project's launches, so it needs fleet-read.
  drawLatency(launchBuckets(await api('/v1/launch-latency')));
}

function drawLatency(buckets) {
  const chart = $('#latency-chart');
  const counts = LATENCY_BOUNDS_MS.map((b, i) => cumulativeAt(buckets, b)
    - (i ? cumulativeAt(buckets, LATENCY_BOUNDS_MS[i - 1]) : 0));
  const total = buckets.length ? buckets[buckets.length - 1][1] : 0;
  const max = Math.max(1, ...counts);
  const width = 360 / counts.length;
  const parts = [axes(max, '')]; // the ticks name the buckets; the caption says they are upper bounds in ms
  counts.forEach((n, i) => {
    const h = PLOT_HEIGHT * n / max;
    parts.push(svg('rect', { x: 30 + i * width + 1, y: 140 - h, width: width - 2, height: h, class: 'bar',
      'data-bound': String(LATENCY_BOUNDS_MS[i]), 'data-count': String(n) }));
    const label = LATENCY_BOUNDS_MS[i] === Infinity ? '∞' : LATENCY_BOUNDS_MS[i] >= 1000
      ? `${LATENCY_BOUNDS_MS[i] / 1000}s` : String(LATENCY_BOUNDS_MS[i]);
    parts.push(svg('text', { x: 30 + (i + 0.5) * width, y: 152, 'text-anchor': 'middle', class: 'tick' }, label));
  });
  chart.replaceChildren(...parts);
  const fmt = ms => (ms === null ? '—' : ms === Infinity ? '> 10 s' : `≤ ${ms < 1 ? ms.toFixed(2) : Math.round(ms)} ms`);
  $('#latency-caption').textContent = `Launch latency (POST /v1/instances, this replica; a bar per bucket, its `
    + `upper bound in ms or s): ${total} launches, `
    + `p50 ${fmt(quantile(buckets, 0.5))}, p99 ${fmt(quantile(buckets, 0.99))}`;
}

// ---- instances ---------------------------------------------------------------------------------------------

async function loadInstances() {
  const filter = $('#instance-filters [name=state]').value;
  const all = new Map();
  let cursor = null;
  for (let page = 0; page < INSTANCE_PAGES; page++) {
    const body = await api(`/v1/instances${query({ state: filter, limit: PAGE, cursor })}`);
    body.items.forEach(i => all.set(i.id, i));
    cursor = body.nextCursor;
    if (!cursor) break;
  }
  state.instances = all;
  state.instancesCapped = Boolean(cursor);
  state.changedInstances.clear();
  renderInstances();
}

/** Instances named by new events, read again one by one (a handful per second at most). */
async function refreshChangedInstances() {
  const ids = [...state.changedInstances];
  state.changedInstances.clear();
  if (ids.length > 50) return loadInstances();
  const filter = $('#instance-filters [name=state]').value;
  for (const id of ids) {
    try {
      const i = await api(`/v1/instances/${encodeURIComponent(id)}`);
      if (!filter || i.state === filter) state.instances.set(i.id, i);
      else state.instances.delete(i.id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }
  renderInstances();
}

function renderInstances() {
  const all = [...state.instances.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const list = all.slice(0, state.instancesShown);
  const capped = state.instancesCapped ? ` (the first ${all.length} the API lists, oldest first: choose a state to `
    + 'narrow them)' : '';
  pager('instances', list.length < all.length || capped
    ? `Showing the newest ${list.length} of ${all.length} instances${capped}.`
    : `${plural(all.length, 'instance')}, newest first.`, list.length < all.length);
  $('#instances tbody').replaceChildren(...list.map(i => {
    const toRunning = i.runningAt ? `${((Date.parse(i.runningAt) - Date.parse(i.createdAt)) / 1000).toFixed(1)} s` : '';
    const row = el('tr', { 'data-instance': i.id, class: 'clickable' },
      el('td', {}, i.id), el('td', { class: `state s-${i.state}` }, i.state), el('td', {}, i.shape),
      el('td', {}, i.machineId), el('td', {}, i.project), el('td', {}, when(i.createdAt)), el('td', {}, toRunning));
    row.addEventListener('click', () => showTimeline('instance', i.id, true));
    return row;
  }));
}

// ---- machines ----------------------------------------------------------------------------------------------

function plural(n, what) {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** The filter's machines, read in pages on the server's cursor until as many rows as the user asked for. */
async function loadMachines() {
  const form = new FormData($('#machine-filters'));
  const filter = { state: form.get('state'), shape: form.get('shape'), labelSelector: form.get('labelSelector') };
  const items = [];
  let cursor = null;
  do {
    const body = await api(`/v1/machines${query({ ...filter,
      limit: Math.min(PAGE, state.machinesWanted - items.length), cursor })}`);
    items.push(...body.items);
    cursor = body.nextCursor;
  } while (cursor && items.length < state.machinesWanted);
  state.machinesDirty = false;
  state.machinesLoadedAt = Date.now();
  const total = machineCount(filter);
  const of = total !== null && total > items.length ? ` of ${total}` : '';
  pager('machines', cursor
    ? `Showing ${items.length}${of || ' (more on the server)'} machines, oldest first.`
    : `${plural(items.length, 'machine')}, all shown, oldest first.`, Boolean(cursor));
  showWaiting(filter.state);
  $('#machines tbody').replaceChildren(...items.map(m => {
    const labels = Object.entries(m.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ');
    const identity = [m.identity?.primaryMac, m.identity?.systemUuid].filter(Boolean).join(' ');
    const row = el('tr', { 'data-machine': m.id, class: 'clickable' },
      el('td', {}, m.id), el('td', {}, m.name), el('td', { class: `state s-${m.state}` }, m.state + (m.cordoned ? ' (cordoned)' : '')),
      el('td', {}, m.shape), el('td', {}, labels), el('td', {}, when(m.stateChangedAt)), el('td', {}, identity),
      el('td', { class: 'actions' }, admission(m)));
    row.addEventListener('click', () => showTimeline('machine', m.id, true));
    return row;
  }));
}

/** How many machines the filter matches, from the shapes' counts per state; null when labels narrow it. */
function machineCount(filter) {
  if (filter.labelSelector || !state.shapes.length) return null;
  return state.shapes.filter(s => !filter.shape || s.name === filter.shape)
    .map(s => Object.entries(s.counts || {}).filter(([st]) => !filter.state || st === filter.state)
      .reduce((sum, [, n]) => sum + n, 0))
    .reduce((sum, n) => sum + n, 0);
}

/** New hardware waits for an operator wherever it sorts: a button filters to it unless that is the filter. */
function showWaiting(filterState) {
  const waiting = state.shapes.reduce((sum, s) => sum + ((s.counts || {}).new || 0), 0);
  const button = $('#machines .pager .waiting');
  button.hidden = !waiting || filterState === 'new';
  button.textContent = `${plural(waiting, 'new machine')} ${waiting === 1 ? 'waits' : 'wait'} for acceptance: show`;
}

/** A new filter starts again from one page. */
function filterMachines() {
  state.machinesWanted = SHOWN_ROWS;
  guarded('machines', 'the machines', loadMachines).catch(() => {});
}

/**
 * New hardware from a network boot waits for an operator: Accept (its pool prepares it) or Reject (retired; a
 * second click confirms). Nothing for machines already admitted.
 */
function admission(m) {
  if (m.admitted !== false || m.state === 'retired') return [];
  const accept = el('button', { type: 'button', class: 'accept',
    title: 'Admit it: its facts and identity are what you expect' }, 'Accept');
  const reject = el('button', { type: 'button', class: 'reject', title: 'Refuse it: it is retired' }, 'Reject');
  accept.addEventListener('click', ev => decide(ev, m.id, 'accept'));
  reject.addEventListener('click', ev => {
    if (reject.dataset.armed) decide(ev, m.id, 'reject');
    else { ev.stopPropagation(); reject.dataset.armed = 'yes'; reject.textContent = 'Reject: sure?'; }
  });
  return [accept, reject];
}

async function decide(ev, id, action) {
  ev.stopPropagation(); // not the row's timeline
  ev.target.disabled = true;
  try {
    await api(`/v1/machines/${encodeURIComponent(id)}/${action}`, 'POST');
    notice('machines', `Machine ${id}: ${action === 'accept' ? 'accepted' : 'rejected'}.`, 'info');
    await loadMachines();
  } catch (err) {
    if (err instanceof LoggedOut) return;
    ev.target.disabled = false;
    notice('machines', `Could not ${action} machine ${id}: ${err.message}`,
      err instanceof ApiError && err.status === 403 ? 'forbidden' : 'error');
  }
}

// ---- timeline ----------------------------------------------------------------------------------------------

async function showTimeline(kind, id, scroll = false) {
  const panel = $('#timeline');
  panel.hidden = false;
  panel.dataset.subject = id;
  $('#timeline-title').textContent = `Timeline of ${kind} ${id}`;
  // Called from clicks and the event loop alike: a 401 has already sent the user to the login page.
  await guarded('timeline', `the events of ${kind} ${id}`, async () => {
    const items = [];
    let since = null;
    for (let page = 0; page < 10; page++) {
      const body = await api(`/v1/events${query({ [`${kind}Id`]: id, since, limit: PAGE })}`);
      items.push(...body.items);
      since = body.nextCursor;
      if (body.items.length < PAGE) break;
    }
    if (panel.dataset.subject !== id) return; // another row was clicked meanwhile
    $('#timeline .events').replaceChildren(...items.map(eventItem));
    drawStrip(items.filter(e => e.type === (kind === 'machine' ? 'MachineState' : 'InstanceState')));
  }).catch(() => {});
  if (scroll) panel.scrollIntoView({ block: 'nearest' }); // on a click only, not on live updates
}

/** The states one after another, each as wide as it lasted (the last up to now). */
function drawStrip(changes) {
  const strip = $('#timeline-strip');
  if (!changes.length) return strip.replaceChildren();
  const times = changes.map(e => Date.parse(e.at));
  const t0 = times[0];
  const span = Math.max(1, Date.now() - t0);
  strip.replaceChildren(...changes.map((e, i) => {
    const x = 400 * (times[i] - t0) / span;
    const end = i + 1 < times.length ? 400 * (times[i + 1] - t0) / span : 400;
    const g = svg('g', {});
    g.append(svg('rect', { x, y: 0, width: Math.max(1, end - x), height: 24, class: `seg s-${e.to}` }));
    g.append(svg('title', {}, `${e.to} from ${when(e.at)}`));
    return g;
  }));
}

// ---- events ------------------------------------------------------------------------------------------------

function eventItem(e) {
  const change = e.from || e.to ? `${e.from || '∅'} → ${e.to || '∅'}` : '';
  // The reason wraps onto its own line when the panel is narrow: shown whole, never cut.
  return el('li', { 'data-seq': e.seq, 'data-type': e.type, 'data-subject': e.subject },
    el('time', {}, when(e.at)), el('span', { class: 'type' }, e.type), el('span', { class: 'subject' }, e.subject),
    el('span', { class: 'change' }, change), el('span', { class: 'reason' }, e.reason || ''));
}

/** Reads on from the cursor; the first call catches up from the start of the log, keeping only the newest. */
async function pollEvents() {
  const fresh = [];
  for (let page = 0; page < 10; page++) {
    const body = await api(`/v1/events${query({ since: state.cursor, limit: PAGE })}`);
    fresh.push(...body.items);
    state.cursor = body.nextCursor;
    if (body.items.length < PAGE) break;
    fresh.splice(0, Math.max(0, fresh.length - KEEP_EVENTS));
  }
  if (!fresh.length) return;
  fresh.forEach(e => {
    if (e.instanceId) state.changedInstances.add(e.instanceId);
    if (e.machineId) state.machinesDirty = true;
  });
  state.events = state.events.concat(fresh).slice(-KEEP_EVENTS);
  $('#events .events').replaceChildren(...state.events.slice().reverse().map(eventItem));
  const subject = $('#timeline').dataset.subject;
  if (subject && fresh.some(e => e.machineId === subject || e.instanceId === subject)) {
    showTimeline(subject.startsWith('i-') ? 'instance' : 'machine', subject);
  }
}

// ---- the loop ----------------------------------------------------------------------------------------------

async function tick() {
  state.timer = null;
  const n = state.tick++;
  try {
    await guarded('events', 'the events', pollEvents);
    if (n % 2 === 0 || state.machinesDirty) await loadPools();
    if (state.changedInstances.size) await guarded('instances', 'the instances', refreshChangedInstances);
    if (state.machinesDirty && !state.forbidden.has('machines') && Date.now() - state.machinesLoadedAt > 3000) {
      state.machinesLoadedAt = Date.now(); // a failure waits its turn too
      await guarded('machines', 'the machines', loadMachines);
    }
    if (n % 10 === 0 && !state.forbidden.has('latency')) {
      loadLatency().catch(err => {
        if (err instanceof LoggedOut) return;
        const refused = err instanceof ApiError && err.status === 403;
        if (refused) state.forbidden.add('latency'); // the role will not change: asked once per login
        $('#latency-caption').textContent = refused ? `Launch latency: your token's role cannot see it (${err.message})`
          : `Launch latency unavailable: ${err.message}`;
      });
    }
    $('#status').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    if (err instanceof LoggedOut) return;
    $('#status').textContent = `error: ${err.message}`;
  }
  if (sessionStorage.getItem(TOKEN_KEY)) state.timer = setTimeout(tick, TICK_MS);
}

async function start() {
  $('#login').hidden = true;
  $('#app').hidden = false;
  Object.assign(state, { cursor: null, events: [], samples: [], instances: new Map(), tick: 0, machinesDirty: true,
    machinesLoadedAt: 0, forbidden: new Set(), poolsRefused: null, machinesWanted: SHOWN_ROWS,
    instancesShown: SHOWN_ROWS, instancesCapped: false });
  try {
    await loadPools(); // first: the shapes' counts say how many machines the list's pages hold
    await guarded('instances', 'the instances', loadInstances);
    await guarded('machines', 'the machines', loadMachines);
  } catch (err) {
    if (err instanceof LoggedOut) return;
  }
  tick();
}

function logout(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  $('#app').hidden = true;
  $('#login').hidden = false;
  $('#login-error').textContent = message || '';
  $('#token').value = '';
  $('#token').focus();
}

function init() {
  const states = $('#machine-filters [name=state]');
  MACHINE_STATES.forEach(s => states.append(el('option', { value: s }, s)));
  $('#login-form').addEventListener('submit', ev => {
    ev.preventDefault();
    const token = $('#token').value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('#login-error').textContent = '';
    start();
  });
  $('#logout').addEventListener('click', () => logout('Logged out.'));
  $('#machine-filters').addEventListener('submit', ev => {
    ev.preventDefault();
    filterMachines();
  });
  $('#machines .pager .more').addEventListener('click', () => {
    state.machinesWanted += SHOWN_ROWS;
    guarded('machines', 'the machines', loadMachines).catch(() => {});
  });
  $('#machines .pager .waiting').addEventListener('click', () => {
    $('#machine-filters [name=state]').value = 'new';
    filterMachines();
  });
  $('#instance-filters [name=state]').addEventListener('change', () => {
    state.instancesShown = SHOWN_ROWS;
    guarded('instances', 'the instances', loadInstances).catch(() => {});
  });
  $('#instances .pager .more').addEventListener('click', () => {
    state.instancesShown += SHOWN_ROWS;
    renderInstances();
  });
  if (sessionStorage.getItem(TOKEN_KEY)) start();
  else logout('');
}

init();
