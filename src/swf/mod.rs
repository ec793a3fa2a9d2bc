//! Standard Workload Format reader (filled in by the SWF work).
