# SPDX-License-Identifier: MIT
# A class method chain outer -> middle -> (a block) -> leaf_work, run for
# SECONDS. Prints, once, where each frame of the chain is as Ruby itself
# sees it (caller_locations): "label file line" lines, innermost first,
# the leaf as "leaf_work file FIRST-LAST" (its body's lines), each
# method's def line as "def NAME file LINE", then "ready".
#   ruby chain.rb [SECONDS]
class Chain
  def self.leaf_work(n)
    x = 0
    i = 0
    while i < n
      x += i * i
      i += 1
    end
    $where ||= caller_locations(1, 8)
    x
  end

  def self.middle(n)
    [n].each { |m| leaf_work(m) }
  end

  def self.outer(n)
    middle(n)
  end
end

secs = (ARGV[0] || "3").to_f
Chain.outer(10)
leaf = Chain.method(:leaf_work).source_location
puts "leaf_work #{File.basename(leaf[0])} #{leaf[1]}-#{leaf[1] + 9}"
%i[leaf_work middle outer].each do |m|
  puts "def #{m} #{File.basename(leaf[0])} #{Chain.method(m).source_location[1]}"
end
$where.each do |l|
  # Array#each is C: its location is its caller's, and it has no frame of its own
  next if l.path.nil? || l.label == "each"
  puts "#{l.label} #{File.basename(l.path)} #{l.lineno}"
end
puts "ready"
$stdout.flush
t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
Chain.outer(200_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < secs
