// Input of cli.test: a kernel outside the supported subset (an atomic).
tt.func public @atomic(%p: !tt.ptr<f32>) {
  %v = arith.constant 1.0 : f32
  %r = tt.atomic_rmw fadd, relaxed, gpu, %p, %v : (!tt.ptr<f32>, f32) -> f32
  tt.return
}
