// The coach's chart: the estimated chance of not ending as the durak after each analysed decision
// (the move played, and the best move as a dashed line), blunders marked. Plain SVG.

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) if (child) el.append(child);
  return el;
}

/**
 * coachChart(report, {label, describe}) -> <svg>
 * `describe(decision)` gives the text of a point's tooltip (the move played against the best).
 */
export function coachChart(report, { label, describe }) {
  const points = report.decisions.filter((decision) => decision.status === 'estimated');
  const width = 640;
  const height = 220;
  const pad = { left: 40, right: 12, top: 12, bottom: 24 };
  const plies = points.map((point) => point.ply);
  const first = plies.length ? Math.min(...plies) : 0;
  const last = plies.length ? Math.max(...plies) : 1;
  const x = (ply) => pad.left + ((ply - first) / Math.max(1, last - first)) * (width - pad.left - pad.right);
  const y = (value) => pad.top + (1 - value) * (height - pad.top - pad.bottom);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'coach-chart', role: 'img', 'aria-label': label });
  for (const level of [0, 0.5, 1]) {
    svg.append(s('line', { x1: pad.left, x2: width - pad.right, y1: y(level), y2: y(level), class: 'grid' }));
    const text = s('text', { x: pad.left - 6, y: y(level) + 4, 'text-anchor': 'end', class: 'axis' });
    text.textContent = `${Math.round(level * 100)}%`;
    svg.append(text);
  }
  const path = (key) => points.map((point, i) => `${i ? 'L' : 'M'}${x(point.ply).toFixed(1)},${y(point[key]).toFixed(1)}`).join(' ');
  if (points.length) {
    svg.append(s('path', { d: path('value_best'), class: 'best-line', fill: 'none' }));
    svg.append(s('path', { d: path('value_played'), class: 'played-line', fill: 'none' }));
  }
  for (const point of points) {
    const dot = s('circle', {
      cx: x(point.ply).toFixed(1),
      cy: y(point.value_played).toFixed(1),
      r: point.blunder ? 6 : 3,
      class: point.blunder ? 'blunder' : 'point',
      'data-ply': point.ply,
    });
    const title = s('title');
    title.textContent = describe(point);
    dot.append(title);
    svg.append(dot);
  }
  return svg;
}
