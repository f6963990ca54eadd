# SPDX-License-Identifier: MIT
# For tests/unit/test_rboffsets.c: prints the addresses (Fiddle.dlwrap:
# the VALUE) of an iseq's wrapper, a short and a long string, two
# arrays and two symbols, what Ruby says of them, and the line of every instruction of
# the iseq ("pos:line", from its own to_a), then waits for stdin to close.
require "fiddle"

def probe(a, b)
  x = a + b
  y = [x].map { |z| z * 2 }
  y.first +
    1
end

iseq = RubyVM::InstructionSequence.of(method(:probe))
short = "short label"
long = "a long string that does not fit in an embedded RString: " * 3
ary = [short, long]
big = (1..40).map(&:to_s)
puts Fiddle.dlwrap(iseq), Fiddle.dlwrap(short), Fiddle.dlwrap(long), Fiddle.dlwrap(ary),
     Fiddle.dlwrap(big)
# a static Symbol's VALUE is its ID << 8 | 0x0c (RUBY_SPECIAL_SHIFT, RUBY_SYMBOL_FLAG)
puts Fiddle.dlwrap(:a_probe_symbol_name), Fiddle.dlwrap(:+)
puts iseq.label, iseq.path, iseq.first_lineno, short, long
pos = 0
line = 0
out = []
iseq.to_a.last.each do |e|
  if e.is_a?(Integer)
    line = e
  elsif e.is_a?(Array)
    out << "#{pos}:#{line}"
    pos += e.size
  end
end
puts out.join(" ")

# Method entries' classes: the frames rb_profile_frames gives (a method
# entry for a method's frame, an iseq else) of a chain through a
# singleton method, an instance method of a nested class, a method of an
# included module (an ICLASS), a module function called on its module,
# and a C method (Fiddle's call), each with what Ruby says of its class
# (rb_profile_frame_classpath, rb_profile_frame_singleton_method_p):
# "VALUE classpath singleton" lines ("-" for no class), then "end".
module Mixin
  def mixed = Util.frames
end

module Util
  module_function

  def frames
    lib = Fiddle.dlopen(nil)
    fn = ->(name, args, ret) { Fiddle::Function.new(lib[name], args, ret) }
    profile = fn.("rb_profile_frames", [Fiddle::TYPE_INT, Fiddle::TYPE_INT, Fiddle::TYPE_VOIDP,
                                        Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT)
    classpath = fn.("rb_profile_frame_classpath", [Fiddle::TYPE_UINTPTR_T], Fiddle::TYPE_UINTPTR_T)
    singleton = fn.("rb_profile_frame_singleton_method_p", [Fiddle::TYPE_UINTPTR_T],
                    Fiddle::TYPE_UINTPTR_T)
    buf = Fiddle::Pointer.malloc(8 * 32)
    lines = Fiddle::Pointer.malloc(4 * 32)
    (0...profile.call(0, 32, buf, lines)).map do |i|
      v = buf[i * 8, 8].unpack1("Q")
      [v, Fiddle.dlunwrap(classpath.call(v)) || "-", Fiddle.dlunwrap(singleton.call(v)) ? 1 : 0]
    end
  end
end

class Outer
  class Inner
    include Mixin

    def inst = mixed
  end

  def self.start = Inner.new.inst
end

Outer.start.each { |v, path, single| puts "#{v} #{path} #{single}" }
puts "end"
$stdout.flush
STDIN.read
