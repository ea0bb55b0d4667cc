// The script of the SVG flame graph (flamegraph_svg.h): reads the tree from
// the document's pf-data and draws the visible frames, in a standalone SVG
// file and inline in the HTML report alike. ID is replaced by the quoted id
// of the <svg>.
#pragma once

namespace prof {

inline constexpr char kFlameGraphScript[] = R"JS(
(function (svg) {
  var api = null;
  // XXX: a graph out of view (further down a report) is set up once it
  // comes near, so a page of several large graphs opens as fast as one.
  function start() {
    if (!api) api = setUp();
    return api;
  }
  function setUp() {
  var data = JSON.parse(svg.querySelector('script.pf-data').textContent);
  var rowHeight = 16, pad = 10, charWidth = 12 * 0.59;
  var top = +svg.getAttribute('data-top'), bottom = +svg.getAttribute('data-bottom');
  var layer = svg.querySelector('g.frames'), details = svg.querySelector('.details');
  var tip = svg.querySelector('g.tip'), tipBox = tip.querySelector('rect');
  var tipText = tip.querySelector('text');
  var searchBox = svg.querySelector('input.search'), matched = svg.querySelector('.matched');
  var invertBox = svg.querySelector('input.invert'), minBox = svg.querySelector('input.min');
  var resetButton = svg.querySelector('button.reset');
  var names = [], where = [], total = data.total;
  data.names.forEach(function (s) {
    var tab = s.lastIndexOf('\t');
    names.push(tab < 0 ? s : s.slice(0, tab));
    where.push(tab < 0 ? '' : s.slice(tab + 1));
  });
  for (var i = 0, fresh = 0; i < data.name.length; i++)
    data.name[i] = data.name[i] ? data.name[i] - 1 : fresh++;
  var maxDepth = data.depth.reduce(function (a, b) { return Math.max(a, b); }, 0);

  // A tree in depth-first order with each node's parent, the end of its
  // subtree and its start (the counts left of it).
  function layout(name, depth, value, inlined) {
    var n = name.length, parent = new Int32Array(n), end = new Int32Array(n);
    var start = new Float64Array(n), next = new Float64Array(n), open = [];
    for (var i = 0; i < n; i++) {
      while (open.length && depth[open[open.length - 1]] >= depth[i]) end[open.pop()] = i;
      var p = open.length ? open[open.length - 1] : -1;
      parent[i] = p;
      start[i] = next[i] = p < 0 ? 0 : next[p];
      if (p >= 0) next[p] += value[i];
      open.push(i);
    }
    while (open.length) end[open.pop()] = n;
    return {name: name, depth: depth, value: value, inlined: inlined, parent: parent, end: end,
            start: start};
  }
  var flames = layout(data.name, data.depth, data.value, (function () {
    var flags = new Uint8Array(data.name.length);
    data.inlined.forEach(function (i) { flags[i] = 1; });
    return flags;
  })());

  // Callers: each stack's own count under its leaf, then its callers.
  function inverted(t) {
    var root = {name: t.name[0], value: 0, inlined: 0, kids: new Map()};
    var path = [];
    for (var i = 0; i < t.name.length; i++) {
      path.length = t.depth[i];
      path.push(i);
      var own = t.value[i];
      for (var c = i + 1; c < t.end[i]; c = t.end[c]) own -= t.value[c];
      if (own <= 0) continue;
      root.value += own;
      var at = root;
      for (var k = path.length - 1; k > 0; k--) {
        var node = path[k], kid = at.kids.get(t.name[node]);
        if (!kid) at.kids.set(t.name[node], kid = {name: t.name[node], value: 0, inlined: 0, kids: new Map()});
        kid.value += own;
        kid.inlined |= t.inlined[node];
        at = kid;
      }
    }
    var name = [], depth = [], value = [], inlined = [], todo = [[root, 0]];
    while (todo.length) {
      var item = todo.pop(), f = item[0];
      name.push(f.name); depth.push(item[1]); value.push(f.value); inlined.push(f.inlined);
      var kids = Array.from(f.kids.values()).sort(function (a, b) {
        return names[a.name] < names[b.name] ? 1 : names[a.name] > names[b.name] ? -1 : 0;
      });
      kids.forEach(function (k) { todo.push([k, item[1] + 1]); });
    }
    return layout(name, depth, value, inlined);
  }
  var callers = null, tree = flames, zoomed = 0, hits = null;

  function colour(n, root) {
    if (root) return 'rgb(200,200,196)';
    var s = names[n], h = 2166136261;  // FNV-1a: a name keeps its colour across graphs
    for (var i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
    var a = (h & 255) / 255, b = ((h >>> 8) & 255) / 255, c = ((h >>> 16) & 255) / 255;
    if (s.charAt(0) === '@' || / \(@[^()]*\)$/.test(s))  // a Lua frame, named or not
      return 'rgb(' + ((70 + 60 * a) | 0) + ',' + ((140 + 60 * b) | 0) + ',' + ((215 + 40 * c) | 0) + ')';
    if (data.memory)
      return 'rgb(' + ((40 + 70 * a) | 0) + ',' + ((160 + 65 * b) | 0) + ',' + ((60 + 80 * c) | 0) + ')';
    return 'rgb(' + ((220 + 35 * a) | 0) + ',' + ((70 + 140 * b) | 0) + ',' + ((20 + 45 * c) | 0) + ')';
  }
  var colours = [];
  function escape(s) {
    return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
  function label(s, width) {
    var fits = Math.floor((width - 6) / charWidth);
    return s.length <= fits ? s : fits >= 3 ? s.slice(0, fits - 2) + '..' : '';
  }
  function grouped(v) { return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function amount(v) {
    if (data.unit !== 'bytes') return grouped(v) + ' ' + data.unit;
    var units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0, x = v;
    while (x >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    return (u ? x.toFixed(1) + ' ' + units[u] + ' (' + grouped(v) + ' bytes)' : grouped(v) + ' bytes');
  }
  function share(v) { return (100 * v / total).toFixed(2) + '%'; }

  function width() { return Math.max(svg.getBoundingClientRect().width || 1200, 200); }
  function rowY(d) { return data.icicle ? top + d * rowHeight : top + (maxDepth - d) * rowHeight; }
  var drawn = {};  // node -> [x, width] of its frame as drawn
  function draw() {
    var span = width() - 2 * pad, t = tree, z = zoomed, scale = span / t.value[z];
    var minWidth = Math.max(+minBox.value || 0, 0.01), parts = [];
    drawn = {};
    function emit(i, x, w, around) {
      var nm = t.name[i], y = rowY(t.depth[i]);
      if (colours[nm] === undefined) colours[nm] = colour(nm, i === 0);
      var fill = hits && hits[nm] && i !== 0 ? 'rgb(230,0,230)' : colours[nm], text = label(names[nm], w);
      parts.push('<g class="f' + (around ? ' parent' : '') + '" data-i="' + i + '"><rect x="' +
                 x.toFixed(2) + '" y="' + y + '" width="' + w.toFixed(2) + '" height="' +
                 (rowHeight - 1) + '" rx="2" fill="' + fill + '"/>' +
                 (text ? '<text x="' + (x + 3).toFixed(2) + '" y="' + (y + rowHeight - 4.5) + '">' +
                         escape(text) + '</text>' : '') + '</g>');
      drawn[i] = [x, w, y];
    }
    for (var a = t.parent[z]; a >= 0; a = t.parent[a]) emit(a, pad, span, true);
    for (var i = z; i < t.end[z];) {
      var w = t.value[i] * scale;
      if (w < minWidth) { i = t.end[i]; continue; }
      emit(i, pad + (t.start[i] - t.start[z]) * scale, w, false);
      i++;
    }
    layer.innerHTML = parts.join('');
    resetButton.disabled = z === 0;
    svg.setAttribute('data-drawn', String(parts.length));
  }

  function zoom(i) { zoomed = i; draw(); }
  function search(text) {
    var re = null;
    if (text) {
      try { re = new RegExp(text, 'i'); } catch (e) {
        re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
      }
    }
    hits = re ? names.map(function (s) { return re.test(s); }) : null;
    // Nested matches count once: a matched node's stacks, its subtree skipped.
    var sum = 0, t = tree;
    if (hits)
      for (var i = 1; i < t.name.length;) {
        if (hits[t.name[i]]) { sum += t.value[i]; i = t.end[i]; } else i++;
      }
    matched.textContent = hits ? 'Matched: ' + share(sum) + ' (' + amount(sum) + ')' : '';
    draw();
    return sum;
  }
  function showTip(i, event) {
    var t = tree, nm = t.name[i], lines = [names[nm]];
    var place = (where[nm] || '') + (t.inlined[i] ? (where[nm] ? ' ' : '') + '[inlined]' : '');
    if (place) lines.push(place);
    lines.push(amount(t.value[i]) + ', ' + share(t.value[i]));
    details.textContent = lines.join('  ');
    tipText.innerHTML = lines.map(function (l, k) {
      return '<tspan x="6" dy="' + (k ? 15 : 14) + '">' + escape(l) + '</tspan>';
    }).join('');
    var box = svg.getBoundingClientRect(), w = tipText.getComputedTextLength ?
        Math.max.apply(null, [].map.call(tipText.childNodes, function (s) { return s.getComputedTextLength(); })) + 12 : 300;
    var h = lines.length * 15 + 8, x = event.clientX - box.left + 12, y = event.clientY - box.top + 12;
    if (x + w > box.width) x = Math.max(0, box.width - w);
    if (y + h > box.height) y = Math.max(0, y - h - 24);
    tipBox.setAttribute('width', w.toFixed(0));
    tipBox.setAttribute('height', h);
    tip.setAttribute('transform', 'translate(' + x.toFixed(0) + ',' + y.toFixed(0) + ')');
    tip.removeAttribute('display');
  }
  function frameOf(event) {
    var g = event.target.closest && event.target.closest('g.f');
    return g ? +g.getAttribute('data-i') : -1;
  }
  layer.addEventListener('click', function (e) { var i = frameOf(e); if (i >= 0) zoom(i); });
  layer.addEventListener('mousemove', function (e) { var i = frameOf(e); if (i >= 0) showTip(i, e); });
  layer.addEventListener('mouseleave', function () { tip.setAttribute('display', 'none'); details.textContent = ''; });
  resetButton.addEventListener('click', function () { zoom(0); });
  searchBox.addEventListener('input', function () { search(searchBox.value); });
  minBox.addEventListener('input', draw);
  function invert(on) {
    if (on && !callers) callers = inverted(flames);
    tree = on ? callers : flames;
    invertBox.checked = on;
    zoomed = 0;
    search(searchBox.value);
  }
  invertBox.addEventListener('change', function () { invert(invertBox.checked); });
  var lastWidth = 0;
  window.addEventListener('resize', function () { if (width() !== lastWidth) { lastWidth = width(); draw(); } });

  svg.setAttribute('height', top + (maxDepth + 1) * rowHeight + bottom);
  svg.querySelector('.details').setAttribute('y', top + (maxDepth + 1) * rowHeight + 20);
  svg.querySelector('.matched').setAttribute('y', top + (maxDepth + 1) * rowHeight + 20);
  draw();
  lastWidth = width();
  function nodeNamed(name) {
    var n = names.indexOf(name);
    for (var i = 0; n >= 0 && i < tree.name.length; i++) if (tree.name[i] === n) return i;
    return -1;
  }
  svg.setAttribute('data-ready', String(data.name.length));
  return {
    zoom: function (name) { var i = nodeNamed(name); if (i >= 0) zoom(i); return i >= 0; },
    search: function (text) { searchBox.value = text; return search(text); },
    reset: function () { zoom(0); },
    invert: invert,
    minWidth: function (px) { minBox.value = px; draw(); },
    frame: function (name) {
      var i = nodeNamed(name);
      return i >= 0 && drawn[i] ? {x: drawn[i][0], width: drawn[i][1], y: drawn[i][2], depth: tree.depth[i]} : null;
    }
  };
  }

  svg.profFlame = {};
  ['zoom', 'search', 'reset', 'invert', 'minWidth', 'frame'].forEach(function (name) {
    svg.profFlame[name] = function () { var f = start(); return f[name].apply(f, arguments); };
  });
  svg.querySelector('.bar').addEventListener('focusin', start);
  // Ctrl-F: the search box of the first graph in view.
  document.addEventListener('keydown', function (e) {
    if (!(e.ctrlKey || e.metaKey) || e.key.toLowerCase() !== 'f' || e.profHandled) return;
    var r = svg.getBoundingClientRect();
    if (r.bottom < 0 || r.top > (window.innerHeight || r.bottom)) return;
    e.profHandled = true;
    e.preventDefault();
    var box = svg.querySelector('input.search');
    box.focus();
    box.select();
  });
  var r = svg.getBoundingClientRect(), h = window.innerHeight || 1000;
  if (r.bottom > -h && r.top < 2 * h || !window.IntersectionObserver) {
    start();
  } else {
    svg.setAttribute('data-ready', 'deferred');
    new IntersectionObserver(function (seen, observer) {
      if (!seen.some(function (e) { return e.isIntersecting; })) return;
      observer.disconnect();
      start();
    }, {rootMargin: '100% 0px'}).observe(svg);
  }
})(document.getElementById(ID));
)JS";

}  // namespace prof
