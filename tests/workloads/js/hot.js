// SPDX-License-Identifier: MIT
// A hot JS loop for the JIT naming tests: sfprofHotOuter calls
// sfprofHotInner for argv[2] seconds (default 2).
function sfprofHotInner(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return x;
}
function sfprofHotOuter(secs) {
  const t0 = Date.now();
  let s = 0;
  while (Date.now() - t0 < secs * 1000) s += sfprofHotInner(100000);
  return s;
}
console.log(sfprofHotOuter(parseFloat(process.argv[2] || "2")));
