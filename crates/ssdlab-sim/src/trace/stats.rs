//! Trace statistics (size mix, sequential share, queue depth).
