// Inline SVG icons (built with the DOM, never parsed from markup): they draw the same on every
// phone, where an emoji or a symbol may have no font. Each is decorative (aria-hidden): the control
// that holds it carries the words.
const NS = 'http://www.w3.org/2000/svg';

// 24x24 outline paths (stroke: currentColor), or filled ones where noted.
const PATHS = {
  menu: { stroke: ['M4 7h16', 'M4 12h16', 'M4 17h16'] },
  close: { stroke: ['M6 6l12 12', 'M18 6L6 18'] },
  share: { stroke: ['M12 15V4', 'M8 8l4-4 4 4', 'M5 12v7a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1v-7'] },
  copy: { stroke: ['M9 9h10v11H9z', 'M5 15V4h10'] },
  bot: { stroke: ['M5 9h14v10H5z', 'M12 5v4', 'M9 14h.01', 'M15 14h.01', 'M9 17h6'] },
  offline: { stroke: ['M2 8.5a15 15 0 0 1 20 0', 'M5 12a10 10 0 0 1 14 0', 'M8.5 15.5a5 5 0 0 1 7 0', 'M12 19h.01', 'M3 3l18 18'] },
  play: { fill: ['M7 4.5v15l12.5-7.5z'] },
  pause: { fill: ['M6 4h4.5v16H6z', 'M13.5 4H18v16h-4.5z'] },
  next: { fill: ['M5 4.5v15l10-7.5z', 'M16 4.5h3v15h-3z'] },
  prev: { fill: ['M19 4.5v15L9 12z', 'M5 4.5h3v15H5z'] },
  last: { fill: ['M2.5 4.5v15l9-7.5z', 'M11.5 4.5v15l9-7.5z'] },
  first: { fill: ['M21.5 4.5v15l-9-7.5z', 'M12.5 4.5v15l-9-7.5z'] },
  chat: { stroke: ['M4 5h16v11H9l-5 4z', 'M8 9.5h8', 'M8 12.5h5'] },
  sound: { stroke: ['M4 9h4l5-4v14l-5-4H4z', 'M16.5 9a4 4 0 0 1 0 6', 'M19 6.5a7.5 7.5 0 0 1 0 11'] },
  sound_off: { stroke: ['M4 9h4l5-4v14l-5-4H4z', 'M16 9.5l5 5', 'M21 9.5l-5 5'] },
  log: { stroke: ['M5 6h14', 'M5 10h14', 'M5 14h14', 'M5 18h9'] },
  leave: { stroke: ['M10 4H5v16h5', 'M14 8l4 4-4 4', 'M18 12H9'] },
  flag: { stroke: ['M6 21V4', 'M6 4h11l-2.5 4L17 12H6'] },
  mask: { stroke: ['M3 8c3-2 15-2 18 0 0 5-3 9-6 9-1.5 0-2-2-3-2s-1.5 2-3 2c-3 0-6-4-6-9z', 'M7.5 11h3', 'M13.5 11h3'] },
  check: { stroke: ['M5 12.5l4.5 4.5L19 7'] },
  eye: { stroke: ['M2 12s3.5-6.5 10-6.5S22 12 22 12s-3.5 6.5-10 6.5S2 12 2 12z', 'M12 9.5a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5z'] },
  spade: { fill: ['M12 2c3 4.2 8 7.3 8 11.4a4.3 4.3 0 0 1-7.2 3.2L14 22h-4l1.2-5.4A4.3 4.3 0 0 1 4 13.4C4 9.3 9 6.2 12 2z'] },
};

export function icon(name, { size = 24, className = 'icon' } = {}) {
  const spec = PATHS[name];
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', String(size));
  svg.setAttribute('height', String(size));
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `${className} icon-${name}`);
  for (const d of spec.stroke || []) {
    const path = document.createElementNS(NS, 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', 'currentColor');
    path.setAttribute('stroke-width', '2');
    path.setAttribute('stroke-linecap', 'round');
    path.setAttribute('stroke-linejoin', 'round');
    svg.append(path);
  }
  for (const d of spec.fill || []) {
    const path = document.createElementNS(NS, 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'currentColor');
    svg.append(path);
  }
  return svg;
}
