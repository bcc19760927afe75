import { describe, expect, it } from 'bun:test'
import { cgroupCpuLimit, cpusOfCpuMax, usableCpus } from '@lr/platform/cpus'

/** A file system of these files only, as a container would show them. */
const files = (contents: Record<string, string>) => (path: string) => contents[path]

describe('cpusOfCpuMax', () => {
  it('reads a cgroup v2 quota as whole CPUs, rounded up, and `max` as no limit', () => {
    expect(cpusOfCpuMax('100000 100000\n')).toBe(1)
    expect(cpusOfCpuMax('150000 100000\n')).toBe(2)
    expect(cpusOfCpuMax('50000 100000\n')).toBe(1)
    expect(cpusOfCpuMax('400000 100000')).toBe(4)
    expect(cpusOfCpuMax('max 100000\n')).toBeUndefined()
    expect(cpusOfCpuMax('garbage')).toBeUndefined()
  })
})

describe('cgroupCpuLimit', () => {
  it("reads cgroup v2's cpu.max of the process's own group", () => {
    const read = files({ '/proc/self/cgroup': '0::/kubepods/pod1/c1\n', '/sys/fs/cgroup/kubepods/pod1/c1/cpu.max': '200000 100000\n', '/sys/fs/cgroup/cpu.max': 'max 100000\n' })
    expect(cgroupCpuLimit(read)).toBe(2)
  })

  it('takes the smallest limit on the way up: a parent group limits every group below it', () => {
    const nested = (own: string, parent: string, slice = 'max 100000') =>
      files({
        '/proc/self/cgroup': '0::/system.slice/lr.slice/lr-resolver.service\n',
        '/sys/fs/cgroup/system.slice/lr.slice/lr-resolver.service/cpu.max': own,
        '/sys/fs/cgroup/system.slice/lr.slice/cpu.max': parent,
        '/sys/fs/cgroup/system.slice/cpu.max': slice,
      })
    expect(cgroupCpuLimit(nested('max 100000\n', '100000 100000\n'))).toBe(1) // CPUQuota=100% on the slice
    expect(cgroupCpuLimit(nested('200000 100000\n', '400000 100000\n'))).toBe(2)
    expect(cgroupCpuLimit(nested('400000 100000\n', '150000 100000\n'))).toBe(2)
    expect(cgroupCpuLimit(nested('max 100000\n', 'max 100000\n', '300000 100000\n'))).toBe(3)
    expect(cgroupCpuLimit(nested('max 100000\n', 'max 100000\n'))).toBeUndefined()
  })

  it('takes the smallest cgroup v1 quota on the way up', () => {
    const read = files({
      '/proc/self/cgroup': '3:cpu,cpuacct:/kubepods/pod1/c1\n',
      '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/c1/cpu.cfs_quota_us': '-1\n',
      '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/c1/cpu.cfs_period_us': '100000\n',
      '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_quota_us': '200000\n',
      '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_period_us': '100000\n',
    })
    expect(cgroupCpuLimit(read)).toBe(2)
  })

  it('reads the root cpu.max a container sees through its own cgroup namespace', () => {
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '100000 100000\n' }))).toBe(1)
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/docker/abc\n', '/sys/fs/cgroup/cpu.max': '300000 100000\n' }))).toBe(3)
  })

  it('reads cgroup v1 cfs quota and period, -1 being no limit', () => {
    const v1 = (quota: string) =>
      files({ '/proc/self/cgroup': '4:memory:/x\n3:cpu,cpuacct:/kubepods/pod1\n2:cpuset:/\n', '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_quota_us': quota, '/sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_period_us': '100000\n' })
    expect(cgroupCpuLimit(v1('250000\n'))).toBe(3)
    expect(cgroupCpuLimit(v1('-1\n'))).toBeUndefined()
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '1:cpu:/\n', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '100000', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000' }))).toBe(1)
  })

  it('finds no limit without cgroup files', () => {
    expect(cgroupCpuLimit(files({}))).toBeUndefined()
  })
})

describe('usableCpus', () => {
  it('is the cores, fewer under a cgroup limit, never fewer than one', () => {
    const limited = (quota: string) => files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': quota })
    expect(usableCpus(limited('100000 100000'), 16)).toBe(1)
    expect(usableCpus(limited('800000 100000'), 4)).toBe(4)
    expect(usableCpus(limited('max 100000'), 8)).toBe(8)
    expect(usableCpus(files({}), 8)).toBe(8)
    expect(usableCpus(files({}), 0)).toBe(1)
  })
})
