import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/** Reads a file's text, or undefined when it cannot be read (absent, not a cgroup file system). */
export type ReadText = (path: string) => string | undefined

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** CPUs a quota of `quota` µs per `period` µs allows, rounded up; undefined when unlimited or unreadable. */
function cpusOfQuota(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined
  return Math.max(1, Math.ceil(quota / period))
}

/** cgroup v2 `cpu.max` (`max 100000` or `150000 100000`) as CPUs. */
export function cpusOfCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/)
  return quota === 'max' ? undefined : cpusOfQuota(Number(quota), Number(period ?? 100_000))
}

/**
 * The CPU limit of this process's cgroup, as whole CPUs rounded up, or undefined when there is
 * none (or no cgroup file system). A container's `resources.limits.cpu` is such a quota: a pod
 * limited to 1 CPU on a 16-core node may use one CPU's time, however many cores it sees.
 * cgroup v2 first (`cpu.max` of the process's own group, else of the root a container sees), then v1
 * (`cpu.cfs_quota_us` / `cpu.cfs_period_us`).
 */
export function cgroupCpuLimit(read: ReadText = readText): number | undefined {
  const groups = read('/proc/self/cgroup') ?? ''
  const v2Path = /^0::(\/\S*)$/m.exec(groups)?.[1]
  for (const dir of dirsOf('/sys/fs/cgroup', v2Path)) {
    const cpuMax = read(`${dir}/cpu.max`)
    if (cpuMax !== undefined) return cpusOfCpuMax(cpuMax)
  }
  const v1Path = /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(\/\S*)$/m.exec(groups)?.[1]
  for (const dir of [...dirsOf('/sys/fs/cgroup/cpu', v1Path), ...dirsOf('/sys/fs/cgroup/cpu,cpuacct', v1Path)]) {
    const quota = read(`${dir}/cpu.cfs_quota_us`)
    const period = read(`${dir}/cpu.cfs_period_us`)
    if (quota !== undefined && period !== undefined) return cpusOfQuota(Number(quota.trim()), Number(period.trim()))
  }
  return undefined
}

/** Where a group's files may be: under `mount` at the group's own path, else at the mount's root (a container's view). */
function dirsOf(mount: string, path: string | undefined): string[] {
  const own = path && path !== '/' ? `${mount}${path.replace(/\/$/, '')}` : undefined
  return own ? [own, mount] : [mount]
}

/**
 * The CPUs this process can keep busy: the cores it may run on (availableParallelism, its
 * affinity), fewer when its cgroup limits its CPU time (cgroupCpuLimit). What a default thread
 * count follows: threads beyond it only take turns, each with its own memory.
 */
export function usableCpus(read: ReadText = readText, cores = availableParallelism()): number {
  const limit = cgroupCpuLimit(read)
  return Math.max(1, limit === undefined ? cores : Math.min(cores, limit))
}
