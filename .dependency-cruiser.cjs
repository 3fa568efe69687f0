/**
 * The layering as a check (`npm run lint:layers`, run by .ci/run). Data flows one way, down this list: a
 * folder may import the folders before it and never one after it; the simulator imports only itself and
 * common/, what it shares with the client.
 */
const LAYERS = [
  'common',
  'options',
  'tokenizer',
  'dataset',
  'schedule',
  'send',
  'record',
  'traffic',
  'server-metrics',
  'summarise',
  'slo',
  'executors',
  // the load engine plans, drives and summarises a run; it writes no report and records no history
  'load',
  'report',
  'history',
  // a run as a pipeline: plan → load → summarise, then the outputs (files, history, the line) told of it
  'run',
  'capacity',
  'matchers',
  'launch',
  'topology',
  'calibrate',
  'plugin',
  'command-line',
]

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `${layer}-imports-upward`,
  comment: `src/${layer}/ may import only ${LAYERS.slice(0, i).join(', ') || 'nothing of ours'} (and itself): it sits below ${LAYERS.slice(i + 1).join(', ')}`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${LAYERS.slice(i + 1).join('|')}|sim)/` },
}))

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
    {
      name: 'sim-behind-its-boundary',
      comment: 'the simulator is a program of its own: it imports only src/sim/ and src/common/',
      severity: 'error',
      from: { path: '^src/sim/' },
      to: { path: '^src/', pathNot: '^src/(sim|common)/' },
    },
    {
      name: 'client-does-not-import-the-simulator',
      comment: 'the client launches the simulator as a process; it never imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/sim/', '^src/cli\\.ts$'] },
      to: { path: '^src/sim/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
}
