//! The `Output` methods an operator does not act on itself, written once for every
//! operator of this crate: watermarks, watermark statuses, the end of input and
//! processing-time ticks go on to the operator's `out`, after the operator has fired
//! the timers they make due (keyed operators) or noted the watermark (operators whose
//! functions read it). Each macro expands to methods inside an `impl Output<_> for _`
//! block of a type with a field `out: Box<dyn Output<_>>`.

/// Forwards the end of input and watermark statuses to `self.out`.
macro_rules! forward_end_and_status {
    () => {
        fn end_input(&mut self) -> Result<(), ::weir_runtime::error::TaskError> {
            self.out.end_input()
        }
        fn emit_watermark_status(
            &mut self,
            status: ::weir_core::element::WatermarkStatus,
        ) -> Result<(), ::weir_runtime::error::TaskError> {
            self.out.emit_watermark_status(status)
        }
    };
}

/// Forwards everything but records to `self.out`: an operator without time of its own.
macro_rules! forward_output {
    () => {
        fn emit_watermark(
            &mut self,
            watermark: ::weir_core::Watermark,
        ) -> Result<(), ::weir_runtime::error::TaskError> {
            self.out.emit_watermark(watermark)
        }
        fn on_processing_time(&mut self, now: i64) -> Result<(), ::weir_runtime::error::TaskError> {
            self.out.on_processing_time(now)
        }
        $crate::forwarding::forward_end_and_status!();
    };
}

/// Like [`forward_output`], but first raises `self.watermark` (an `i64`, the highest
/// watermark seen) to each watermark, for the function contexts to report.
macro_rules! forward_output_noting_watermark {
    () => {
        fn emit_watermark(
            &mut self,
            watermark: ::weir_core::Watermark,
        ) -> Result<(), ::weir_runtime::error::TaskError> {
            self.watermark = self.watermark.max(watermark.0);
            self.out.emit_watermark(watermark)
        }
        fn on_processing_time(&mut self, now: i64) -> Result<(), ::weir_runtime::error::TaskError> {
            self.out.on_processing_time(now)
        }
        $crate::forwarding::forward_end_and_status!();
    };
}

/// Forwards everything but records to `self.out` after firing the timers it makes due:
/// a watermark fires the event-time timers up to it, a processing-time tick those up
/// to `now`, each by `self.$fire(timer, domain)`. `$timers` is the path of the
/// operator's `TimerService` below `self`.
macro_rules! fire_timers_and_forward {
    ($($timers:ident).+, $fire:ident) => {
        fn emit_watermark(&mut self, watermark: ::weir_core::Watermark) -> Result<(), ::weir_runtime::error::TaskError> {
            while let Some(timer) = self.$($timers).+.advance_and_pop(watermark.0) {
                self.$fire(timer, ::weir_state::TimeDomain::EventTime)?;
            }
            self.out.emit_watermark(watermark)
        }
        fn on_processing_time(&mut self, now: i64) -> Result<(), ::weir_runtime::error::TaskError> {
            while let Some(timer) = self.$($timers).+.pop_processing_time_timer(now) {
                self.$fire(timer, ::weir_state::TimeDomain::ProcessingTime)?;
            }
            self.out.on_processing_time(now)
        }
        $crate::forwarding::forward_end_and_status!();
    };
}

pub(crate) use {fire_timers_and_forward, forward_end_and_status, forward_output, forward_output_noting_watermark};
