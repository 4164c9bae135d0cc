"""The parts of tools/bench/arm_loops.py, which ties them together: disassembly, loop
finding and classification, llvm-mca runs, OpenSSL's and our loops, the report."""
