# SPDX-License-Identifier: MIT
# A class method chain outer -> middle -> (a block) -> leaf_work, run for
# SECONDS. Prints, once, where each frame of the chain is as Ruby itself
# sees it (caller_locations), labelled as Ruby qualifies its methods
# (Chain.outer, block in Chain.middle): "label file line" lines,
# innermost first, the leaf as "Chain.leaf_work file FIRST-LAST" (its
# body's lines), each method's def line as "def NAME file LINE", the C
# method as "Array#each - 0", then "ready".
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
# a method's name as Ruby qualifies it (Method#inspect: "#<Method:
# Chain.leaf_work(n) ...>", "#<Method: Array#each()>")
def qname(m) = m.inspect[/\A#<Method: ([^(]+)\(/, 1]
leaf = Chain.method(:leaf_work).source_location
puts "#{qname(Chain.method(:leaf_work))} #{File.basename(leaf[0])} #{leaf[1]}-#{leaf[1] + 9}"
%i[leaf_work middle outer].each do |m|
  puts "def #{qname(Chain.method(m))} #{File.basename(leaf[0])} #{Chain.method(m).source_location[1]}"
end
$where.each do |l|
  # Array#each is C: its location is its caller's, and it has no frame of its own
  next if l.path.nil? || l.label == "each"
  # a block's label is its method's, qualified, after "block in "
  label = l.label
  label = label.delete_suffix(l.base_label) + qname(Chain.method(l.base_label)) if
    Chain.respond_to?(l.base_label)
  puts "#{label} #{File.basename(l.path)} #{l.lineno}"
end
puts "#{qname([].method(:each))} - 0"
puts "ready"
$stdout.flush
t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
Chain.outer(200_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < secs
