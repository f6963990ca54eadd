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
$stdout.flush
STDIN.read
