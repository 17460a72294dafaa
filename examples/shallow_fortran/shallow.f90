! The NCAR shallow-water model, timed loop by loop for benchdb (docs/programs.md).
!
! The model is the NCAR "shallow" benchmark (Sadourny 1975 potential-enstrophy
! scheme on an Arakawa C grid) as restructured by paper 003 (Osprey et al.,
! HPCS 2014, Listing 1 and Table I): an M x N periodic domain held in
! (M+1) x (N+1) arrays with one halo row and column, 13 arrays, ten update
! loops, seven periodic boundary updates and three copies per time step.  It
! computes the same model as benchdb's kernels/builtin/shallow/model.py, in the same
! order: index (i,j) here is [i-1, j-1] there.
!
! Usage: ./shallow M N REPS
!
! One run, as the line protocol asks:
!   1. initial conditions, then the forward first step (untimed warm-up);
!   2. BENCHDB checksum: the sum of u, v and p, which does not depend on REPS;
!   3. REPS leapfrog steps timed as a whole (loop "step");
!   4. REPS more with a timer around each phase of the step, inside the time
!      step as paper 003 (section V) timed its loops, so that each loop runs
!      with the other arrays competing for cache as in the real model;
!   5. the mass-conservation check (BENCHDB check pass / fail);
!   6. BENCHDB time <loop> <seconds summed over the REPS repetitions>.
! It also prints final_checksum, the sum of u, v and p after all 1 + 2 REPS
! steps (not a protocol line), so that a test can compare the final state
! with the numpy reference.
!
! Standard Fortran 2003 (command-line arguments, iso_fortran_env, typed
! array constructors); the model's loops are plain Fortran 90.

program shallow
   use, intrinsic :: iso_fortran_env, only: error_unit
   implicit none

   integer, parameter :: dp = kind(1.0d0)
   integer, parameter :: i8 = selected_int_kind(18)

   ! The original model's constants (DT=90., DX=DY=1.E5, A=1.E6, ALPHA=.001).
   real(dp), parameter :: dt = 90.0_dp, dx = 1.0e5_dp, dy = 1.0e5_dp
   real(dp), parameter :: a = 1.0e6_dp, alpha = 0.001_dp
   real(dp), parameter :: pi = 3.14159265358979323846_dp

   ! The 13 phases of one time step, in order (kernels/builtin/shallow/step.py PHASES):
   ! the ten update loops of paper 003 Table I, the periodic continuation of
   ! cu, cv, z, h and then of unew, vnew, pnew, and the three copies.
   integer, parameter :: nphases = 13
   character(len=8), parameter :: phase_name(nphases) = [character(len=8) :: &
      'cu', 'cv', 'z', 'h', 'boundary', 'unew', 'vnew', 'pnew', 'boundary', &
      'uold', 'vold', 'pold', 'copy']
   ! The loops benchdb.toml declares: each phase name once, then the whole step.
   integer, parameter :: nloops = 13
   character(len=8), parameter :: loop_name(nloops) = [character(len=8) :: &
      'cu', 'cv', 'z', 'h', 'unew', 'vnew', 'pnew', 'uold', 'vold', 'pold', &
      'boundary', 'copy', 'step']

   ! Largest relative change of the mass over the timed steps that passes the
   ! self-check.  The scheme conserves the mass exactly (see mass()), so the
   ! change is round-off: each step rounds every point's update and the sum
   ! itself is rounded, and those errors mostly cancel.  Over 2 x 10**5 steps
   ! (more than a benchdb sample takes at its default sample time) the change
   ! stayed within a few 1e-15 at sizes from 1x1 to 4000x4000; only tiny
   ! domains run for millions of steps drift further (3x3: 2e-13 after
   ! 2 x 10**6 steps, 1e-12 after 10**7).  1e-11 leaves a margin of 1000 for
   ! benchdb's runs, yet is far below what breaking conservation does: a time
   ! filter that mixes time levels of unequal sums changes the mass by 1e-3
   ! in one step, a missing periodic update of a flux by 1e-7 at 16x16 (less
   ! on large domains, where this flow's flux through the boundary nearly
   ! cancels: the tests compare the state with the numpy reference, this
   ! check guards every run of a sweep).
   real(dp), parameter :: mass_tolerance = 1.0e-11_dp

   integer :: m, n, reps
   ! The 13 arrays of the model (paper 003 eq. 9 counts all of them).
   real(dp), allocatable, dimension(:,:) :: u, v, p, unew, vnew, pnew, &
      uold, vold, pold, cu, cv, z, h
   ! Per-step scalars (the original's FSDX, TDTS8, ...) set by step_constants.
   real(dp) :: fsdx, fsdy, tdts8, tdtsdx, tdtsdy, alf

   integer(i8) :: rate, overhead, start, t0, t1, step_ticks, ticks(nphases)
   real(dp) :: mass_before, drift, seconds(nphases), loop_seconds(nloops)
   integer :: k, r

   call read_arguments()
   call initial_state()
   ! With integer(8) arguments, gfortran's system_clock reads CLOCK_MONOTONIC
   ! in nanoseconds (count_rate 10**9): fine enough for a loop of a
   ! microsecond once the cost of a read is subtracted.
   call system_clock(count_rate=rate)
   overhead = clock_read_overhead()

   ! Warm-up: the forward first step (TDT = DT, no time filter), which also
   ! first-touches every array.
   call step_constants(first=.true.)
   do k = 1, nphases
      call phase(k)
   end do
   write (*, '(a,es24.16)') 'BENCHDB checksum ', checksum()

   ! Every timed step is a leapfrog step with the Robert-Asselin filter.
   call step_constants(first=.false.)
   mass_before = mass()

   ! The whole step, with no clock inside it.
   call system_clock(start)
   do r = 1, reps
      do k = 1, nphases
         call phase(k)
      end do
   end do
   call system_clock(t1)
   step_ticks = max(t1 - start - overhead, 0_i8)

   ! The same phases with the clock read between consecutive ones: each
   ! interval includes the cost of one clock read, subtracted below.
   ticks = 0
   do r = 1, reps
      call system_clock(t0)
      do k = 1, nphases
         call phase(k)
         call system_clock(t1)
         ticks(k) = ticks(k) + (t1 - t0)
         t0 = t1
      end do
   end do

   drift = abs(mass() - mass_before) / abs(mass_before)
   if (drift <= mass_tolerance) then
      write (*, '(a)') 'BENCHDB check pass'
   else
      ! Also reached when the state is no longer finite (NaN compares false).
      write (*, '(a,es10.3)') 'BENCHDB check fail mass drift ', drift
   end if

   seconds = real(max(ticks - reps * overhead, 0_i8), dp) / real(rate, dp)
   do k = 1, nloops - 1
      loop_seconds(k) = sum(seconds, mask=phase_name == loop_name(k))
   end do
   loop_seconds(nloops) = real(step_ticks, dp) / real(rate, dp)
   do k = 1, nloops
      write (*, '(2a,es24.16)') 'BENCHDB time ', trim(loop_name(k)), loop_seconds(k)
   end do
   write (*, '(a,es24.16)') 'final_checksum ', checksum()

contains

   subroutine read_arguments()
      ! M, N and REPS from the command line; a usage line and exit status 2
      ! unless there are exactly three integers >= 1.
      if (command_argument_count() /= 3) call usage()
      m = positive_argument(1)
      n = positive_argument(2)
      reps = positive_argument(3)
   end subroutine read_arguments

   integer function positive_argument(position)
      integer, intent(in) :: position
      character(len=32) :: text
      integer :: status

      call get_command_argument(position, text, status=status)
      if (status /= 0 .or. len_trim(text) == 0) call usage()
      if (verify(trim(text), '0123456789') /= 0) call usage()
      read (text, *, iostat=status) positive_argument
      if (status /= 0) call usage()  ! too large for an integer
      if (positive_argument < 1) call usage()
   end function positive_argument

   subroutine usage()
      write (error_unit, '(a)') 'usage: shallow M N REPS  (integers >= 1: an M x N ' // &
         'domain, REPS timed time steps)'
      stop 2
   end subroutine usage

   subroutine initial_state()
      ! The original initial conditions (kernels/builtin/shallow/model.py initial_state):
      ! stream function psi and pressure p; u = -d(psi)/dy and v = d(psi)/dx
      ! (non-divergent), made periodic; the old fields start equal to the
      ! current ones.
      real(dp), allocatable :: psi(:, :)
      real(dp) :: di, dj, el, pcf
      integer :: i, j, status

      allocate (u(m + 1, n + 1), v(m + 1, n + 1), p(m + 1, n + 1), &
         unew(m + 1, n + 1), vnew(m + 1, n + 1), pnew(m + 1, n + 1), &
         uold(m + 1, n + 1), vold(m + 1, n + 1), pold(m + 1, n + 1), &
         cu(m + 1, n + 1), cv(m + 1, n + 1), z(m + 1, n + 1), h(m + 1, n + 1), &
         psi(m + 1, n + 1), stat=status)
      if (status /= 0) then
         write (error_unit, '(a,i0,a,i0,a)') 'shallow: cannot allocate 13 arrays of ', &
            m + 1, ' x ', n + 1, ' reals'
         stop 1
      end if
      ! The work arrays start at zero; u and v too, so that their periodic
      ! update below reads no point before it is set.
      u = 0; v = 0; unew = 0; vnew = 0; pnew = 0; cu = 0; cv = 0; z = 0; h = 0

      di = 2 * pi / m
      dj = 2 * pi / n
      el = n * dx
      pcf = pi**2 * a**2 / el**2
      do j = 1, n + 1
         do i = 1, m + 1
            psi(i, j) = a * sin((i - 0.5_dp) * di) * sin((j - 0.5_dp) * dj)
            p(i, j) = pcf * (cos(2 * real(i - 1, dp) * di) + cos(2 * real(j - 1, dp) * dj)) &
               + 50000
         end do
      end do
      do j = 1, n
         do i = 1, m
            u(i + 1, j) = -(psi(i + 1, j + 1) - psi(i + 1, j)) / dy
            v(i, j + 1) = (psi(i + 1, j + 1) - psi(i, j + 1)) / dx
         end do
      end do
      call periodic(u, 1, 0)
      call periodic(v, 0, 1)
      uold = u
      vold = v
      pold = p
   end subroutine initial_state

   subroutine step_constants(first)
      ! The first step is a forward step (TDT = DT) without time filtering
      ! (UOLD = U is the Robert-Asselin filter with alpha = 0); later steps
      ! are leapfrog (TDT = 2 DT) with the filter.
      logical, intent(in) :: first
      real(dp) :: tdt

      if (first) then
         tdt = dt
         alf = 0
      else
         tdt = 2 * dt
         alf = alpha
      end if
      fsdx = 4 / dx
      fsdy = 4 / dy
      tdts8 = tdt / 8
      tdtsdx = tdt / dx
      tdtsdy = tdt / dy
   end subroutine step_constants

   subroutine phase(k)
      ! Phase k of one time step (phase_name(k)).  The loops take the arrays
      ! as arguments, as the original's CALC1-3 did: the compiler may then
      ! assume that they do not overlap, and vectorises them.
      integer, intent(in) :: k

      select case (k)
      case (1)
         call calc_cu(cu, p, u)
      case (2)
         call calc_cv(cv, p, v)
      case (3)
         call calc_z(z, u, v, p)
      case (4)
         call calc_h(h, p, u, v)
      case (5)  ! boundary: periodic continuation of cu, cv, z, h
         call periodic(cu, 1, 0)
         call periodic(cv, 0, 1)
         call periodic(z, 1, 1)
         call periodic(h, 0, 0)
      case (6)
         call calc_unew(unew, uold, z, cv, h)
      case (7)
         call calc_vnew(vnew, vold, z, cu, h)
      case (8)
         call calc_pnew(pnew, pold, cu, cv)
      case (9)  ! boundary: periodic continuation of unew, vnew, pnew
         call periodic(unew, 1, 0)
         call periodic(vnew, 0, 1)
         call periodic(pnew, 0, 0)
      case (10)
         call time_filter(uold, u, unew)
      case (11)
         call time_filter(vold, v, vnew)
      case (12)
         call time_filter(pold, p, pnew)
      case (13)  ! copy: u = unew, v = vnew, p = pnew, one array after another
         call copy(u, unew)
         call copy(v, vnew)
         call copy(p, pnew)
      end select
   end subroutine phase

   ! The ten update loops of paper 003 Table I (Listing 1 gives their order).
   ! Each comment gives Table I's counts per updated point: reference flops
   ! (a divide counts 5), loads with reuse along i, stores.  Staggering:
   ! u, cu, unew live at (i+1,j), v, cv, vnew at (i,j+1), z at (i+1,j+1),
   ! p, h, pnew at (i,j).  The first seven update the M x N inner points.

   subroutine calc_cu(cu, p, u)
      ! Mass flux along x; 3 flops, 2 loads, 1 store.
      real(dp), intent(inout) :: cu(m + 1, n + 1)
      real(dp), intent(in) :: p(m + 1, n + 1), u(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            cu(i + 1, j) = 0.5_dp * (p(i + 1, j) + p(i, j)) * u(i + 1, j)
         end do
      end do
   end subroutine calc_cu

   subroutine calc_cv(cv, p, v)
      ! Mass flux along y; 3 flops, 3 loads, 1 store.
      real(dp), intent(inout) :: cv(m + 1, n + 1)
      real(dp), intent(in) :: p(m + 1, n + 1), v(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            cv(i, j + 1) = 0.5_dp * (p(i, j + 1) + p(i, j)) * v(i, j + 1)
         end do
      end do
   end subroutine calc_cv

   subroutine calc_z(z, u, v, p)
      ! Potential vorticity; 13 flops, 5 loads, 1 store.
      real(dp), intent(inout) :: z(m + 1, n + 1)
      real(dp), intent(in) :: u(m + 1, n + 1), v(m + 1, n + 1), p(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            z(i + 1, j + 1) = (fsdx * (v(i + 1, j + 1) - v(i, j + 1)) &
               - fsdy * (u(i + 1, j + 1) - u(i + 1, j))) &
               / (p(i, j) + p(i + 1, j) + p(i + 1, j + 1) + p(i, j + 1))
         end do
      end do
   end subroutine calc_z

   subroutine calc_h(h, p, u, v)
      ! Pressure plus kinetic energy; 9 flops, 4 loads, 1 store.
      real(dp), intent(inout) :: h(m + 1, n + 1)
      real(dp), intent(in) :: p(m + 1, n + 1), u(m + 1, n + 1), v(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            h(i, j) = p(i, j) + 0.25_dp * (u(i + 1, j) * u(i + 1, j) + u(i, j) * u(i, j) &
               + v(i, j + 1) * v(i, j + 1) + v(i, j) * v(i, j))
         end do
      end do
   end subroutine calc_h

   subroutine calc_unew(unew, uold, z, cv, h)
      ! New u; 10 flops, 6 loads, 1 store.
      real(dp), intent(inout) :: unew(m + 1, n + 1)
      real(dp), intent(in) :: uold(m + 1, n + 1), z(m + 1, n + 1), cv(m + 1, n + 1), &
         h(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            unew(i + 1, j) = uold(i + 1, j) &
               + tdts8 * (z(i + 1, j + 1) + z(i + 1, j)) &
               * (cv(i + 1, j + 1) + cv(i, j + 1) + cv(i, j) + cv(i + 1, j)) &
               - tdtsdx * (h(i + 1, j) - h(i, j))
         end do
      end do
   end subroutine calc_unew

   subroutine calc_vnew(vnew, vold, z, cu, h)
      ! New v; 10 flops, 6 loads, 1 store.
      real(dp), intent(inout) :: vnew(m + 1, n + 1)
      real(dp), intent(in) :: vold(m + 1, n + 1), z(m + 1, n + 1), cu(m + 1, n + 1), &
         h(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            vnew(i, j + 1) = vold(i, j + 1) &
               - tdts8 * (z(i + 1, j + 1) + z(i, j + 1)) &
               * (cu(i + 1, j + 1) + cu(i, j + 1) + cu(i, j) + cu(i + 1, j)) &
               - tdtsdy * (h(i, j + 1) - h(i, j))
         end do
      end do
   end subroutine calc_vnew

   subroutine calc_pnew(pnew, pold, cu, cv)
      ! New p: the flux divergence; 6 flops, 4 loads, 1 store.
      real(dp), intent(inout) :: pnew(m + 1, n + 1)
      real(dp), intent(in) :: pold(m + 1, n + 1), cu(m + 1, n + 1), cv(m + 1, n + 1)
      integer :: i, j

      do j = 1, n
         do i = 1, m
            pnew(i, j) = pold(i, j) - tdtsdx * (cu(i + 1, j) - cu(i, j)) &
               - tdtsdy * (cv(i, j + 1) - cv(i, j))
         end do
      end do
   end subroutine calc_pnew

   subroutine periodic(f, offset_i, offset_j)
      ! Periodic continuation of one field (the original's loops 110/115 and
      ! 210/215, as kernels/builtin/shallow/model.py periodic).  Along an axis where
      ! the field's inner points start at index 2 (offset 1) the halo is
      ! index 1, a copy of the last index; where they start at 1 the halo is
      ! the last index, a copy of index 1.
      real(dp), intent(inout) :: f(m + 1, n + 1)
      integer, intent(in) :: offset_i, offset_j

      if (offset_i == 1) then
         f(1, :) = f(m + 1, :)
      else
         f(m + 1, :) = f(1, :)
      end if
      if (offset_j == 1) then
         f(:, 1) = f(:, n + 1)
      else
         f(:, n + 1) = f(:, 1)
      end if
   end subroutine periodic

   subroutine time_filter(old, cur, new)
      ! The loops uold, vold and pold: the Robert-Asselin time filter
      ! old = cur + alpha (new - 2 cur + old) over the full (M+1) x (N+1)
      ! arrays; 5 flops, 3 loads, 1 store.
      real(dp), intent(inout) :: old(m + 1, n + 1)
      real(dp), intent(in) :: cur(m + 1, n + 1), new(m + 1, n + 1)
      integer :: i, j

      do j = 1, n + 1
         do i = 1, m + 1
            old(i, j) = cur(i, j) + alf * (new(i, j) - 2 * cur(i, j) + old(i, j))
         end do
      end do
   end subroutine time_filter

   subroutine copy(dst, src)
      ! One of the three copies, over the full arrays; 1 load, 1 store.
      real(dp), intent(out) :: dst(m + 1, n + 1)
      real(dp), intent(in) :: src(m + 1, n + 1)
      integer :: i, j

      do j = 1, n + 1
         do i = 1, m + 1
            dst(i, j) = src(i, j)
         end do
      end do
   end subroutine copy

   integer(i8) function clock_read_overhead()
      ! Ticks one clock read adds to an interval: the median of back-to-back
      ! reads (kernels/clock.py read_overhead_ticks), found from a histogram
      ! of the integer tick counts.
      integer, parameter :: samples = 20000, top = 10000
      integer :: counts(0:top), k, seen, bin
      integer(i8) :: c0, c1

      counts = 0
      do k = 1, samples
         call system_clock(c0)
         call system_clock(c1)
         bin = int(min(c1 - c0, int(top, i8)))
         counts(bin) = counts(bin) + 1
      end do
      seen = 0
      do k = 0, top
         seen = seen + counts(k)
         if (2 * seen >= samples) exit
      end do
      clock_read_overhead = k
   end function clock_read_overhead

   real(dp) function checksum()
      ! Sum of u, v and p over the full arrays (kernels/builtin/shallow/step.py state_checksum).
      checksum = sum(u) + sum(v) + sum(p)
   end function checksum

   real(dp) function mass()
      ! Sum of p over the M x N inner points (kernels/builtin/shallow/model.py mass):
      ! pnew - pold is a flux divergence that sums to zero on the periodic
      ! domain, and the time filter combines time levels of equal sums, so
      ! the scheme conserves it up to round-off.  Summed column by column,
      ! so that the sum's own rounding error grows like M + N, not M x N.
      integer :: j

      mass = 0
      do j = 1, n
         mass = mass + sum(p(1:m, j))
      end do
   end function mass

end program shallow
