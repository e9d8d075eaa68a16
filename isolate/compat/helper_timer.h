/* lscat's own stand-in for the CUDA samples' helper_timer.h (StopWatchInterface and the sdk*Timer
 * functions), written from its documented interface, not copied; used only when a repository
 * lacks the header. Times are host wall-clock milliseconds. */
#ifndef LSCAT_COMPAT_HELPER_TIMER_H
#define LSCAT_COMPAT_HELPER_TIMER_H

#include <chrono>

class StopWatchInterface {
  public:
    void start() { t0 = std::chrono::steady_clock::now(); running = true; }
    void stop()
    {
        if (running)
            total += now_ms();
        running = false;
        laps++;
    }
    void reset() { total = 0; laps = 0; running = false; }
    float getTime() const { return (float)(total + (running ? now_ms() : 0)); }
    float getAverageTime() const { return laps ? (float)(total / laps) : 0.0f; }

  private:
    double now_ms() const
    {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
            .count();
    }
    std::chrono::steady_clock::time_point t0{};
    double total = 0;
    int laps = 0;
    bool running = false;
};

inline bool sdkCreateTimer(StopWatchInterface **t) { *t = new StopWatchInterface(); return true; }
inline bool sdkDeleteTimer(StopWatchInterface **t) { delete *t; *t = nullptr; return true; }
inline bool sdkStartTimer(StopWatchInterface **t) { (*t)->start(); return true; }
inline bool sdkStopTimer(StopWatchInterface **t) { (*t)->stop(); return true; }
inline bool sdkResetTimer(StopWatchInterface **t) { (*t)->reset(); return true; }
inline float sdkGetTimerValue(StopWatchInterface **t) { return (*t)->getTime(); }
inline float sdkGetAverageTimerValue(StopWatchInterface **t) { return (*t)->getAverageTime(); }

#endif
