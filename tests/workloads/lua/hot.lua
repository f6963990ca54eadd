-- SPDX-License-Identifier: MIT
-- A hot loop LuaJIT compiles to a trace: machine code in an anonymous
-- executable mapping, with no perf map or jitdump naming it.
-- Usage: luajit hot.lua SECONDS
local secs = tonumber(arg[1]) or 3
local t0 = os.clock()
local acc = 0
local function step(x) return (x * 31 + 7) % 1000003 end
while os.clock() - t0 < secs do
  for i = 1, 1000000 do acc = step(acc + i) end
end
print(acc)
