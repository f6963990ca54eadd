# SPDX-License-Identifier: MIT
# bench/ruby_cost.py's workload: outer -> middle -> a block -> leaf_work
# (tests/workloads/ruby/chain.rb's shape) ROUNDS times; prints its own
# elapsed_ns and cpu_ns around the work.
#   ruby ruby_work.rb [ROUNDS]
class Work
  def self.leaf_work(n)
    x = 0
    i = 0
    while i < n
      x += i * i
      i += 1
    end
    x
  end

  def self.middle(n)
    [n].each { |m| leaf_work(m) }
  end

  def self.outer(n)
    middle(n)
  end
end

rounds = (ARGV[0] || "200").to_i
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
rounds.times { Work.outer(200_000) }
puts "elapsed_ns #{Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0}"
puts "cpu_ns #{Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond) - c0}"
