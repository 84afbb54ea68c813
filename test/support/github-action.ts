/**
 * Runs a composite GitHub Action's `run:` steps the way a GitHub runner does, so a test can
 * try the action in the repository (.github/actions/…) against a real server: each step's
 * `${{ inputs.* }}` and `${{ github.action_path }}` filled in (inputs from `with`, else their
 * defaults), its `env:` given, executed by `bash --noprofile --norc -eo pipefail` (GitHub's
 * `shell: bash`), with GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and RUNNER_TEMP files
 * that carry over between steps as on a runner. `uses:` steps (setup-node) are left out: the
 * test's own Node stands in. An expression the runner here does not know fails the run.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

interface ActionStep {
  id?: string;
  name?: string;
  shell?: string;
  run?: string;
  uses?: string;
  if?: string;
  env?: Record<string, string>;
}

interface ActionFile {
  inputs?: Record<string, { required?: boolean; default?: string }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

export interface StepResult {
  name: string;
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

export interface ActionRun {
  steps: StepResult[];
  /** The action's outputs, from its steps' outputs. */
  outputs: Record<string, string>;
  /** The job summary's text (what the steps appended to GITHUB_STEP_SUMMARY). */
  summary: string;
  /** The exit code of the last step run (a failing step stops the action, as on GitHub). */
  code: number | null;
}

export async function readAction(file: string): Promise<ActionFile> {
  return parse(await fs.readFile(file, 'utf8')) as ActionFile;
}

/** `${{ … }}` filled in; only `inputs.<name>`, `github.action_path` and `steps.<id>.outputs.<name>` are known. */
function expand(text: string, ctx: { inputs: Record<string, string>; actionPath: string; steps: Record<string, Record<string, string>> }): string {
  return text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_m, expr: string) => {
    let m = /^inputs\.([\w-]+)$/.exec(expr);
    if (m) {
      if (!(m[1]! in ctx.inputs)) throw new Error(`the action uses an input it does not declare: ${expr}`);
      return ctx.inputs[m[1]!]!;
    }
    if (expr === 'github.action_path') return ctx.actionPath;
    m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (m) return ctx.steps[m[1]!]?.[m[2]!] ?? '';
    throw new Error(`an expression this runner does not evaluate: \${{ ${expr} }}`);
  });
}

/** `name=value` lines (and `name<<EOF` blocks) of a GITHUB_OUTPUT file. */
function readOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([\w-]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (++i < lines.length && lines[i] !== heredoc[2]) body.push(lines[i]!);
      out[heredoc[1]!] = body.join('\n');
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}

function bash(script: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs the action at `actionDir` (its action.yml) with `with` as its inputs, in `workspace`
 * (the job's working folder), with `runnerDir` holding the runner's files and temp folder.
 */
export async function runCompositeAction(opts: {
  actionDir: string;
  with: Record<string, string>;
  workspace: string;
  runnerDir: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<ActionRun> {
  const action = await readAction(path.join(opts.actionDir, 'action.yml'));
  if (action.runs.using !== 'composite') throw new Error(`not a composite action: ${action.runs.using}`);
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs ?? {})) {
    const given = opts.with[name];
    if (given === undefined && spec.required) throw new Error(`input ${name} is required`);
    inputs[name] = given ?? spec.default ?? '';
  }
  for (const name of Object.keys(opts.with)) if (!(name in inputs)) throw new Error(`the action has no input ${name}`);

  const temp = path.join(opts.runnerDir, 'temp');
  await fs.mkdir(temp, { recursive: true });
  const files = { GITHUB_PATH: path.join(opts.runnerDir, 'path'), GITHUB_STEP_SUMMARY: path.join(opts.runnerDir, 'step-summary.md') };
  for (const f of Object.values(files)) await fs.writeFile(f, '', { flag: 'a' });

  // A runner's environment: nothing of the test's MM_ settings or config leaks in.
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MM_') && !k.startsWith('XDG_') && !k.startsWith('GITHUB_')) base[k] = v;
  base.HOME = opts.runnerDir;
  base.XDG_CONFIG_HOME = path.join(opts.runnerDir, 'config');
  base.XDG_CACHE_HOME = path.join(opts.runnerDir, 'cache');
  base.RUNNER_TEMP = temp;
  base.GITHUB_ACTIONS = 'true';
  base.GITHUB_WORKSPACE = opts.workspace;
  base.GITHUB_ACTION_PATH = opts.actionDir;
  Object.assign(base, opts.env);

  const stepOutputs: Record<string, Record<string, string>> = {};
  const results: StepResult[] = [];
  for (const [i, step] of action.runs.steps.entries()) {
    if (step.run === undefined) continue; // `uses:`: the runner's own tools stand in
    if (step.if !== undefined) throw new Error(`step ${step.name ?? i}: conditions are not evaluated here`);
    if (step.shell !== 'bash') throw new Error(`step ${step.name ?? i}: a composite action's run step names its shell (bash here)`);
    const ctx = { inputs, actionPath: opts.actionDir, steps: stepOutputs };
    const script = path.join(temp, `step-${i}.sh`);
    await fs.writeFile(script, expand(step.run, ctx));
    const output = path.join(opts.runnerDir, `output-${i}`);
    await fs.writeFile(output, '');
    const added = (await fs.readFile(files.GITHUB_PATH, 'utf8')).split('\n').filter(Boolean).reverse();
    const env: NodeJS.ProcessEnv = { ...base, ...files, GITHUB_OUTPUT: output, PATH: [...added, base.PATH].join(':') };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(String(v), ctx);
    const r = await bash(script, env, opts.workspace, opts.timeoutMs ?? 600_000);
    const outputs = readOutputs(await fs.readFile(output, 'utf8'));
    if (step.id) stepOutputs[step.id] = outputs;
    results.push({ name: step.name ?? `step ${i}`, ...r, outputs });
    if (r.code !== 0) break;
  }
  const outputs: Record<string, string> = {};
  for (const [name, o] of Object.entries(action.outputs ?? {})) outputs[name] = expand(o.value, { inputs, actionPath: opts.actionDir, steps: stepOutputs });
  return { steps: results, outputs, summary: await fs.readFile(files.GITHUB_STEP_SUMMARY, 'utf8'), code: results.at(-1)?.code ?? null };
}
