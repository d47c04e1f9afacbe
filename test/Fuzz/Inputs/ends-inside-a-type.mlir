// Regression input of replay.test: the input ends inside a type name, with
// no newline or NUL after it (the lexer once read past the end of the
// fuzzer's buffer here; the target now copies every input into a string).
tt.func public @f(%a: !tt.ptr<f32>, %b: !tt.te