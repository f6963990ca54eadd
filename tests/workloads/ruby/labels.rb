# SPDX-License-Identifier: MIT
# Qualified labels: a singleton method Worker.start -> an instance method
# Worker#outer -> a block in it -> Worker#middle -> a module function
# called on its module, Util.spin (the leaf), run for SECONDS. Prints
# once, innermost first, each frame of that chain as Ruby itself labels
# it for profilers (Util.profile_labels) with its file and line: "label
# file line",
# the leaf as "label file FIRST-LAST" (its body), then "ready".
#   ruby labels.rb [SECONDS]
require "fiddle"

module Util
  module_function

  def spin(n)
    x = 0
    i = 0
    while i < n
      x += i * i
      i += 1
    end
    $where ||= Util.profile_labels
    x
  end

  # [label, line] of the frames running, innermost first, from spin's:
  # Ruby's own names for profilers (rb_profile_frame_full_label of
  # rb_profile_frames' frames), which in 3.1 name a block's frame by its
  # method, so a block's label is caller_locations' ("block in outer")
  # with its method part (base_label) qualified as the profiler API does
  def profile_labels
    lib = Fiddle.dlopen(nil)
    frames = Fiddle::Function.new(lib["rb_profile_frames"],
                                  [Fiddle::TYPE_INT, Fiddle::TYPE_INT, Fiddle::TYPE_VOIDP,
                                   Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT)
    full = Fiddle::Function.new(lib["rb_profile_frame_full_label"], [Fiddle::TYPE_UINTPTR_T],
                                Fiddle::TYPE_UINTPTR_T)
    buf = Fiddle::Pointer.malloc(8 * 32)
    lines = Fiddle::Pointer.malloc(4 * 32)
    locs = caller_locations(0, 32)
    n = frames.call(0, 32, buf, lines)
    prof = (0...n).map do |i|
      [Fiddle.dlunwrap(full.call(buf[i * 8, 8].unpack1("Q"))).to_s, lines[i * 4, 4].unpack1("l")]
    end
    prof = prof.drop_while { |l, _| !l.end_with?("spin") }
    locs = locs.drop_while { |l| l.label != "spin" }
    prof.zip(locs).map do |(full_label, line), loc|
      next [full_label, line] unless loc && loc.label != loc.base_label
      [loc.label.delete_suffix(loc.base_label) + full_label, line]
    end
  end
end

class Worker
  def self.start(n)
    new.outer(n)
  end

  def outer(n)
    [n].each { |m| middle(m) }
  end

  def middle(n)
    Util.spin(n)
  end
end

secs = (ARGV[0] || "3").to_f
Worker.start(10)
file = File.basename(__FILE__)
first = Util.method(:spin).source_location[1]
labels = $where
puts "#{labels[0][0]} #{file} #{first}-#{first + 9}"
labels.drop(1).each { |l, line| puts "#{l} #{file} #{line}" }
puts "ready"
$stdout.flush
t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
Worker.start(200_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < secs
