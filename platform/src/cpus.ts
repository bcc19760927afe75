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
 * limited to 1 CPU on a 16-core node may use one CPU's time, however many cores it sees. A limit
 * applies to every group below it, so the smallest one on the way from the process's own group up
 * to the root its file system shows is the one that holds (a systemd slice's `CPUQuota=` above a
 * service, a pod's limit above its containers): each of them is read. cgroup v2 first
 * (`cpu.max`), then v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`).
 */
export function cgroupCpuLimit(read: ReadText = readText): number | undefined {
  const groups = read('/proc/self/cgroup') ?? ''
  const v2Path = /^0::(\/\S*)$/m.exec(groups)?.[1]
  const v2 = dirsOf('/sys/fs/cgroup', v2Path).map((dir) => read(`${dir}/cpu.max`))
  if (v2.some((text) => text !== undefined)) return smallest(v2.map((text) => (text === undefined ? undefined : cpusOfCpuMax(text))))
  const v1Path = /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(\/\S*)$/m.exec(groups)?.[1]
  const v1 = [...dirsOf('/sys/fs/cgroup/cpu', v1Path), ...dirsOf('/sys/fs/cgroup/cpu,cpuacct', v1Path)].map((dir) => {
    const quota = read(`${dir}/cpu.cfs_quota_us`)
    const period = read(`${dir}/cpu.cfs_period_us`)
    return quota === undefined || period === undefined ? undefined : cpusOfQuota(Number(quota.trim()), Number(period.trim()))
  })
  return smallest(v1)
}

const smallest = (limits: (number | undefined)[]) => {
  const set = limits.filter((limit): limit is number => limit !== undefined)
  return set.length === 0 ? undefined : Math.min(...set)
}

/**
 * Where a group's files and its ancestors' may be: under `mount` at the group's own path, then at
 * each parent's, up to the mount's root (a container's view, in which the group is the root).
 */
function dirsOf(mount: string, path: string | undefined): string[] {
  const dirs: string[] = []
  const parts = (path ?? '').split('/').filter(Boolean)
  for (let depth = parts.length; depth > 0; depth--) dirs.push(`${mount}/${parts.slice(0, depth).join('/')}`)
  dirs.push(mount)
  return dirs
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
