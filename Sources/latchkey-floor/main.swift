// latchkey-floor: a Swift program that prints one line and exits, linked as the release
// `latchkey` is (make bench builds both with the same flags). Its whole-process time is
// the start-up any statically linked Swift binary pays on the machine (the runtime's
// initialisers, the loader, the kernel's exec and exit) before its first line of code, the
// floor under `latchkey --version`. Never installed.
print("latchkey-floor")
