# SPDX-License-Identifier: MIT
# A thread blocked in Queue#pop for SECONDS: consumer -> wait_item ->
# Queue#pop. Prints "label FILE LINE" for wait_item (the line of its pop)
# and consumer (of its call), from the methods' source_location (no Ruby
# code runs in the thread while it waits to ask caller_locations), and
# <main> (the line of the push that wakes it), each labelled as Ruby
# qualifies it (Waiter.wait_item), then the C methods pop and << as
# "Thread::Queue#pop - 0", then "ready".
#   ruby wait.rb [SECONDS]
class Waiter
  def self.wait_item(q)
    q.pop
  end

  def self.consumer(q)
    wait_item(q)
  end
end

secs = (ARGV[0] || "2").to_f
q = Queue.new
# a method's name as Ruby qualifies it (Method#inspect: "#<Method:
# Waiter.wait_item(q) ...>", "#<Method: Thread::Queue#pop(*)>")
def qname(m) = m.inspect[/\A#<Method: ([^(]+)\(/, 1]
line = Waiter.method(:wait_item).source_location[1] + 1
puts "#{qname(Waiter.method(:wait_item))} #{File.basename(__FILE__)} #{line}"
puts "#{qname(Waiter.method(:consumer))} #{File.basename(__FILE__)} #{line + 4}"
puts "<main> #{File.basename(__FILE__)} #{__LINE__ + 7}" # the push that wakes it
puts "#{qname(q.method(:pop))} - 0"
puts "#{qname(q.method(:<<))} - 0"
puts "ready"
$stdout.flush
t = Thread.new { Waiter.consumer(q) }
sleep secs
q << 1
t.join
# a process lives on after a wait ends (rbsession.h: names are read by
# a thread of sfprof, milliseconds after the iseqs are first seen)
sleep 0.5
