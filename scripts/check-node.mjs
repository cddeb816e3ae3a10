// `pretest`: says at once when this Node.js is one the lab does not support, before vitest fails
// in some obscure way. Supported: 20.19+ (the build machines' Node, end-of-life since April 2026),
// 22 and 24 (the current LTS, recommended). Tested in CI: Node 20 and the LTS pinned in
// scripts/node-lts.mjs. Exit 1 below the minimum; a one-line note on 20 and on non-LTS (odd) lines.
const MIN = [20, 19];
const [major, minor] = process.versions.node.split('.').map(Number);
const supported = 'supported: Node 20.19+, 22, 24 (tested: 20 and 24; recommended: 24, the current LTS)';
if (major < MIN[0] || (major === MIN[0] && minor < MIN[1])) {
  console.error(`Node ${process.version} is not supported by SRPO Lab; ${supported}.`);
  process.exit(1);
}
if (major === 20) console.error(`note: Node ${process.version} is end-of-life; ${supported}.`);
else if (major % 2 === 1) console.error(`note: Node ${process.version} is not an LTS line and is untested; ${supported}.`);
