/**
 * Host tasks a gVisor sandbox's own kernel (Sentry, gofer, and the host tasks backing the
 * agent-server's processes) takes before the agent runs anything: 34 measured with runsc 2024-07-29.
 */
const GVISOR_BASE_TASKS = 48;
/**
 * Host tasks each process in the sandbox adds under gVisor (a stub process and its threads): 2.4
 * measured, and kept after the process ends (gVisor reuses them), so the peak is what counts.
 */
const GVISOR_TASKS_PER_PROCESS = 3;
/** Fewer than this and the agent's shell could not run a pipeline. */
const MIN_AGENT_PROCESSES = 8;

/**
 * The per-user process limit (RLIMIT_NPROC) that keeps the agent's processes below a sandbox's PIDs
 * limit; null when none is needed. Under gVisor the PIDs cgroup counts the host threads of the
 * sandbox's kernel, not the agent's processes: a fork bomb met the cgroup's limit first and ended
 * the whole sandbox, agent-server included. With this limit the agent's forks fail first, and the
 * agent-server (root, which RLIMIT_NPROC does not bind) keeps answering. Under runc the cgroup
 * counts the agent's processes and refuses them alone, and RLIMIT_NPROC would count every process
 * of the agent's uid on the host, other sandboxes' included: none is set.
 */
export function agentProcessLimit(runtime: string, pidsLimit: number | null): number | null {
  if (runtime !== 'runsc' || pidsLimit === null) return null;
  return Math.max(MIN_AGENT_PROCESSES, Math.floor((pidsLimit - GVISOR_BASE_TASKS) / GVISOR_TASKS_PER_PROCESS));
}
